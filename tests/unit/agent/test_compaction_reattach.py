"""After a compaction, readFileState forgets the files whose contents left the context and re-reads the most
recent of them, only inside the session's working directories (a Read elsewhere may need the person)."""

from __future__ import annotations

from pathlib import Path

from toolgate.agent.compaction import reattach_recent_files
from toolgate.core.context import ToolContext
from toolgate.core.file_state import FileRecord, state_key
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import ApprovalAnswer, ApprovalRequest, NonInteractiveApprover
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime


class CountingApprover(NonInteractiveApprover):
    """Says no, like a headless run, and counts how often a person would have been asked."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        self.asked.append(request)
        return await super().request(request, ctx)


def _seen(runtime: Runtime, path: Path) -> None:
    runtime.session.file_state.set(
        path, FileRecord(content=path.read_text(), mtime_ns=0, offset=None, limit=None, full=True)
    )


async def test_only_files_inside_the_workspace_are_read_again_and_nobody_is_asked(
    workspace: Path, tmp_path: Path
) -> None:
    approver = CountingApprover()
    runtime = build_runtime(workspace, approver, RuntimeOptions())
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not ours\n")
    inside = workspace / "inside.txt"
    inside.write_text("ours\n")
    _seen(runtime, inside)
    _seen(runtime, outside)  # the most recent, but outside the workspace

    attached, forgotten = await reattach_recent_files(runtime, [], budget=10_000, token=CancelToken())

    assert [use.input["file_path"] for use, _ in attached] == [state_key(inside)]
    assert "ours" in attached[0][1].text()
    assert forgotten == [state_key(outside)]
    assert runtime.session.file_state.paths() == [state_key(inside)]  # the outside file must be read again
    assert approver.asked == []  # a compaction puts no approval in front of the person
    await runtime.aclose()


async def test_files_over_the_budget_are_forgotten_not_attached(runtime: Runtime, workspace: Path) -> None:
    big = workspace / "big.txt"
    big.write_text("x" * 8_000 + "\n")
    _seen(runtime, big)
    attached, forgotten = await reattach_recent_files(runtime, [], budget=100, token=CancelToken())
    assert attached == [] and forgotten == [state_key(big)] and runtime.session.file_state.paths() == []
