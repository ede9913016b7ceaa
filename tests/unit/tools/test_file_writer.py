"""The single-file writer skeleton: a new tool that says only how it plans, encodes and reports gets the whole
path (read first, proposal, review, final check, atomic write, record) the way Edit, Write and NotebookEdit do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.file_state import FileRecord
from toolgate.core.messages import ToolUse
from toolgate.core.paths import display_path
from toolgate.core.permission import ReviewAnswer, ReviewedFile, ReviewRequest
from toolgate.core.tool import DescribeContext, ToolInput, ToolTraits
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover
from toolgate.text.encoding import encode
from toolgate.tools import builtin_tools
from toolgate.tools._file_writer import Encoded, SingleFileWriter
from toolgate.tools._write import FinalText, OnDisk, load_for_call, require_fresh


class AppendInput(ToolInput):
    file_path: str = Field(description="The file to append to.")
    line: str


@dataclass(frozen=True, slots=True)
class AppendPlan:
    disk: OnDisk
    new_text: str


class AppendTool(SingleFileWriter[AppendInput, AppendPlan, str]):
    name = "Append"
    input_model = AppendInput
    traits = ToolTraits(open_world=False)

    def description(self, ctx: DescribeContext) -> str:
        return "Append one line to a file you have read."

    def file_path(self, tool_input: AppendInput) -> str:
        return tool_input.file_path

    def plan(self, tool_input: AppendInput, path: Path, record: FileRecord | None, ctx: ToolContext) -> AppendPlan:
        shown = display_path(path, ctx.workspace)
        disk = load_for_call(ctx, path, shown, record)
        require_fresh(record, disk, shown)
        return AppendPlan(disk, disk.text + tool_input.line + "\n")

    def encode(self, tool_input: AppendInput, plan: AppendPlan, chosen: FinalText, shown: str) -> Encoded:
        assert plan.disk.decoded is not None
        return Encoded(encode(chosen.text, plan.disk.decoded.format, like=plan.disk.decoded), chosen.text)

    def done(self, tool_input: AppendInput, plan: AppendPlan, chosen: FinalText, encoded: Encoded, shown: str) -> str:
        return f"Appended to {shown}" + (" (as you changed it)" if chosen.user_modified else "")

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


def runtime(workspace: Path, approver: AllowingApprover) -> Runtime:
    rt = build_runtime(workspace, approver, RuntimeOptions(tools=[*builtin_tools(), AppendTool()], read_settings=False))
    rt.session.review_edits = "always"
    return rt


async def run(rt: Runtime, name: str, **tool_input: str) -> tuple[bool, str]:
    [result] = await rt.orchestrator.run_turn([ToolUse(id=f"{name}-1", name=name, input=tool_input)])
    return result.is_error, result.text()


async def test_a_new_writer_gets_read_first_review_write_and_record(workspace: Path) -> None:
    target = workspace / "notes.txt"
    target.write_bytes(b"one\r\n")
    approver = AllowingApprover()
    rt = runtime(workspace, approver)
    failed, text = await run(rt, "Append", file_path=str(target), line="two")
    assert failed and "has not been read" in text and approver.reviews == []
    assert not (await run(rt, "Read", file_path=str(target)))[0]
    approver.accept_with({str(target): "one\ntwo (reviewed)\n"})
    failed, text = await run(rt, "Append", file_path=str(target), line="two")
    assert not failed and text == "Appended to notes.txt (as you changed it)"
    [review] = approver.reviews
    assert (review.files[0].original, review.files[0].proposed) == ("one\n", "one\ntwo\n")
    assert target.read_bytes() == b"one\r\ntwo (reviewed)\r\n"  # the file's own line endings
    approver.reviewer = None
    assert not (await run(rt, "Append", file_path=str(target), line="three"))[0]  # the write's record: no Read
    assert target.read_bytes() == b"one\r\ntwo (reviewed)\r\nthree\r\n"
    await rt.aclose()


async def test_a_file_changed_during_the_review_is_not_overwritten(workspace: Path) -> None:
    target = workspace / "notes.txt"
    target.write_text("one\n")
    approver = AllowingApprover()
    rt = runtime(workspace, approver)
    assert not (await run(rt, "Read", file_path=str(target)))[0]

    def someone_else_writes(request: ReviewRequest) -> ReviewAnswer:
        target.write_text("one\nfrom another program\n")
        return ReviewAnswer(decision="accept")

    approver.reviewer = someone_else_writes
    failed, text = await run(rt, "Append", file_path=str(target), line="two")
    assert failed and "changed on disk" in text
    assert target.read_text() == "one\nfrom another program\n"
    await rt.aclose()


async def test_a_file_the_review_left_as_it_is_is_not_written(workspace: Path) -> None:
    target = workspace / "new.txt"
    approver = AllowingApprover()
    approver.reviewer = lambda request: ReviewAnswer(
        decision="accept", files=[ReviewedFile(path=str(target), content=None, skipped=True)]
    )
    rt = runtime(workspace, approver)
    failed, text = await run(rt, "Write", file_path=str(target), content="hello\n")
    assert failed and "The user chose to leave new.txt as it is, so nothing was written." in text
    assert not target.exists()
    await rt.aclose()
