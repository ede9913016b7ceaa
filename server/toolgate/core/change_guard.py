"""The question core asks before a call that may change files: "take a checkpoint now". Who answers (the
checkpoint store, see toolgate.checkpoints) is wired in by the runtime; core knows neither the store nor any tool.

A guard that fails must not stop the call: the call runs, and its result carries the guard's warning so the
model and the person see that this change cannot be undone.
"""

from __future__ import annotations

from typing import Protocol

from toolgate.core.deps import Dep
from toolgate.core.messages import TextBlock, ToolResult, ToolResultContent


class ChangeGuard(Protocol):
    async def before_change(self, tool_use_id: str) -> str | None:
        """Called right before the call runs. Returns a warning for its result, or None when all is well."""
        ...

    async def after_change(self, tool_use_id: str) -> str | None:
        """Called right after the call ran (whatever its outcome): what it changed is then told apart from what
        the person changes between calls. Returns a warning for its result, or None."""
        ...

    async def after_hooks(self, tool_use_id: str, event: str) -> str | None:
        """Called after the hooks of `event` ran for the call (hooks are commands: they may change files too,
        and what they changed is then told apart from what the call changes). Returns a warning or None."""
        ...


CHANGE_GUARD: Dep[ChangeGuard | None] = Dep("change_guard", lambda _r: None)


def with_warning(result: ToolResult, warning: str) -> ToolResult:
    """The result with `warning` added after what the tool said (never instead of it)."""
    note = f"[toolgate warning: {warning}]"
    if isinstance(result.content, str):
        content: ToolResultContent = f"{result.content}\n\n{note}"
        return result.model_copy(update={"content": content})
    return result.model_copy(update={"content": [*result.content, TextBlock(text=note)]})
