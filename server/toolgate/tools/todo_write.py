"""TodoWrite: the model's own task list for this session, replaced whole on every call and shown to the user."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.deps import Dep
from toolgate.core.errors import StateError
from toolgate.core.permission import PermissionCheck
from toolgate.core.todo_items import TodoItem
from toolgate.core.tool import DescribeContext, Tool, ToolInput, ToolTraits
from toolgate.core.tool_session import ToolSession

TodoListener = Callable[[list[TodoItem]], None]


class TodoList:
    """The session's current list. Listeners (the chat session) hear every replacement."""

    def __init__(self) -> None:
        self.items: list[TodoItem] = []
        self._listeners: list[TodoListener] = []

    def replace(self, items: list[TodoItem]) -> None:
        self.items = list(items)
        for listener in list(self._listeners):
            listener(self.items)

    def subscribe(self, listener: TodoListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None


TODOS: Dep[TodoList] = Dep("todos", lambda _r: TodoList())


class TodoWriteInput(ToolInput):
    todos: list[TodoItem] = Field(description="The complete, updated list. Items left out are removed.")


class TodoWriteTool(Tool[TodoWriteInput, list[TodoItem]]):
    name = "TodoWrite"
    # It touches no file and runs nothing: it only replaces this session's own todo list (one writer at a time).
    traits = ToolTraits(read_only=True, destructive=False, idempotent=True, open_world=False)
    input_model = TodoWriteInput

    def description(self, ctx: DescribeContext) -> str:
        return (
            "Keep a short task list for the current piece of work; the user sees it update live.\n"
            "- Use it for work with three or more distinct steps, or when the user gives several tasks at once. "
            "Skip it for a single quick change or a question.\n"
            "- Every call sends the whole list; items you leave out are removed.\n"
            "- Mark an item in_progress before you start it and completed as soon as it is done; "
            "at most one item is in_progress at a time.\n"
            "- Only mark an item completed when it is really done (tests pass, nothing left unresolved); "
            "if you are blocked, keep it in_progress and add an item for what blocks you."
        )

    async def check_permissions(self, tool_input: TodoWriteInput, ctx: ToolContext) -> PermissionCheck:
        return PermissionCheck(behavior="allow", reason="it only updates the session's todo list")

    def summary(self, tool_input: TodoWriteInput, workspace: Path) -> str:
        return _counts(tool_input.todos)

    async def validate(self, tool_input: TodoWriteInput, ctx: ToolContext) -> None:
        repeated = sorted(i for i, n in Counter(t.id for t in tool_input.todos).items() if n > 1)
        if repeated:
            raise StateError(
                f"Todo ids must be unique, but {', '.join(map(repr, repeated))} appear more than once. "
                "Give every item its own id and send the whole list again."
            )
        active = [t.id for t in tool_input.todos if t.status == "in_progress"]
        if len(active) > 1:
            raise StateError(
                f"Only one item may be in_progress at a time, but {len(active)} are ({', '.join(active)}). "
                "Keep the one you are working on in_progress, set the others to pending or completed, "
                "and send the whole list again."
            )

    async def call(self, tool_input: TodoWriteInput, ctx: ToolContext) -> list[TodoItem]:
        items = list(tool_input.todos)

        def apply(session: ToolSession) -> None:
            session.deps.get(TODOS).replace(items)

        ctx.commit(apply)
        return items

    def to_result(self, data: list[TodoItem], ctx: ToolContext) -> str:
        if not data:
            return "The todo list is now empty."
        if all(t.status == "completed" for t in data):
            return f"Todo list saved: all {len(data)} items are completed."
        current = next((t for t in data if t.status == "in_progress"), None)
        next_step = (
            f" Now working on: {current.content}"
            if current
            else " No item is in progress: mark the next one in_progress when you start it."
        )
        return f"Todo list saved ({_counts(data)}).{next_step}"


def _counts(items: list[TodoItem]) -> str:
    counts = Counter(t.status for t in items)
    parts = [f"{counts[s]} {s.replace('_', ' ')}" for s in ("completed", "in_progress", "pending") if counts[s]]
    return ", ".join(parts) or "empty"
