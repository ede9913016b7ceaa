"""TodoWrite: validation, the session's list, and the events a chat streams for it."""

from __future__ import annotations

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime
from toolgate.testing import run1
from toolgate.tools.todo_write import TODOS


def items(*statuses: str) -> list[dict[str, str]]:
    return [{"id": f"t{i}", "content": f"step {i}", "status": s} for i, s in enumerate(statuses)]


async def test_the_whole_list_replaces_the_session_list(runtime: Runtime) -> None:
    first = await run1(runtime, "TodoWrite", todos=items("in_progress", "pending"))
    assert not first.is_error, first
    assert first.text() == "Todo list saved (1 in progress, 1 pending). Now working on: step 0"
    second = await run1(runtime, "TodoWrite", todos=items("completed", "completed"))
    assert second.text() == "Todo list saved: all 2 items are completed."
    assert [t.status for t in runtime.session.deps.get(TODOS).items] == ["completed", "completed"]


async def test_at_most_one_item_in_progress(runtime: Runtime) -> None:
    result = await run1(runtime, "TodoWrite", todos=items("in_progress", "in_progress", "pending"))
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "Only one item may be in_progress" in result.text()
        and "t0, t1" in result.text()
    )
    assert runtime.session.deps.get(TODOS).items == []  # nothing applied


async def test_ids_are_unique_and_statuses_known(runtime: Runtime) -> None:
    twice = [{"id": "x", "content": "a", "status": "pending"}, {"id": "x", "content": "b", "status": "pending"}]
    assert "appear more than once" in (await run1(runtime, "TodoWrite", todos=twice)).text()
    bad = await run1(runtime, "TodoWrite", todos=[{"id": "x", "content": "a", "status": "done"}])
    assert bad.is_error and 'kind="invalid_input"' in bad.text() and "status" in bad.text()


async def test_needs_no_approval_even_in_plan_mode(runtime: Runtime) -> None:
    runtime.session.mode = PermissionMode.PLAN
    seen: list[int] = []
    runtime.session.deps.get(TODOS).subscribe(lambda todos: seen.append(len(todos)))
    result = await run1(runtime, "TodoWrite", todos=items("pending"))
    assert not result.is_error, result.text()  # the headless approver would have said no
    assert seen == [1]
