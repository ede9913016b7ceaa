"""Write through the real runtime: creation, read-before-overwrite, staleness, editor state, review."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolgate.core.documents import OPEN_DOCUMENTS
from toolgate.core.errors import StateError
from toolgate.runtime import Runtime
from toolgate.testing import AllowingApprover, run1
from toolgate.tools.write import WriteInput, WriteTool


class DirtyDocuments:
    def __init__(self, *dirty: Path) -> None:
        self.dirty = set(dirty)

    def is_dirty(self, path: Path) -> bool:
        return path in self.dirty

    def text(self, path: Path) -> str | None:
        return None


async def write(rt: Runtime, path: Path | str, content: str) -> tuple[bool, str]:
    result = await run1(rt, "Write", file_path=str(path), content=content)
    return result.is_error, result.text()


async def test_creates_a_new_file_and_its_directories_without_a_read(rt: Runtime, workspace: Path) -> None:
    failed, text = await write(rt, workspace / "a/b/c.txt", "one\ntwo\n")
    assert not failed and text == "Created a/b/c.txt (2 lines)."
    assert (workspace / "a/b/c.txt").read_bytes() == b"one\ntwo\n"
    assert (workspace / "a/b/c.txt").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


async def test_overwriting_an_unread_file_says_read_first(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("precious\n")
    failed, text = await write(rt, target, "clobbered\n")
    assert failed and 'kind="state"' in text and "Read it first" in text
    assert target.read_text() == "precious\n"


async def test_overwriting_a_stale_file_says_read_again(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("v1\n")
    await run1(rt, "Read", file_path=str(target))
    target.write_text("v2 by the user\n")
    os.utime(target, ns=(1, target.stat().st_mtime_ns + 5_000_000_000))
    failed, text = await write(rt, target, "mine\n")
    assert failed and 'kind="state"' in text and "Read it again" in text
    assert target.read_text() == "v2 by the user\n"


async def test_overwriting_a_file_dirty_in_the_editor_is_refused(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("v1\n")
    await run1(rt, "Read", file_path=str(target))
    rt.session.deps.override(OPEN_DOCUMENTS, DirtyDocuments(target))
    failed, text = await write(rt, target, "mine\n")
    assert failed and 'kind="state"' in text and "unsaved changes" in text
    assert target.read_text() == "v1\n"


async def test_a_file_that_appears_after_validation_is_not_clobbered(rt: Runtime, workspace: Path) -> None:
    # Another program creates the file between our check and our write: the final check must notice.
    target = workspace / "race.txt"
    tool = WriteTool()
    ctx = rt.runner.new_context("t1")
    tool_input = WriteInput(file_path=str(target), content="ours\n")
    await tool.validate(tool_input, ctx)
    target.write_text("theirs\n")
    with pytest.raises(StateError, match="Read it first"):
        await tool.call(tool_input, ctx)
    assert target.read_text() == "theirs\n"


async def test_update_reports_lines_and_the_next_edit_needs_no_read(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("old\n")
    await run1(rt, "Read", file_path=str(target))
    failed, text = await write(rt, target, "new\nlines\nhere\n")
    assert not failed and text == "Updated a.txt (3 lines)."
    edited = await run1(rt, "Edit", file_path=str(target), old_string="lines", new_string="LINES")
    assert not edited.is_error, edited.text()


async def test_directory_is_refused(rt: Runtime, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    failed, text = await write(rt, workspace / "sub", "x")
    assert failed and 'kind="state"' in text and "directory" in text


async def test_parent_that_is_a_file_is_a_clear_error(rt: Runtime, workspace: Path) -> None:
    (workspace / "file").write_text("x")
    failed, text = await write(rt, workspace / "file/child.txt", "x")
    assert failed and 'kind="state"' in text


async def test_review_edit_is_written_and_reported(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    target = workspace / "new.txt"
    approver.accept_with({str(target): "reviewed content\n"})
    failed, text = await write(reviewed_rt, target, "proposed content\n")
    assert not failed, text
    [request] = approver.reviews
    assert request.files[0].original is None and request.files[0].proposed == "proposed content\n"
    assert target.read_text() == "reviewed content\n"
    assert "user edited your proposal" in text and "+reviewed content" in text


async def test_review_accepted_unchanged_writes_the_content_exactly_as_sent(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    target = workspace / "win.txt"
    failed, text = await write(reviewed_rt, target, "a\r\nb\r\n")
    assert not failed, text
    assert approver.reviews[0].files[0].proposed == "a\nb\n"
    assert target.read_bytes() == b"a\r\nb\r\n" and "user edited" not in text


async def test_a_review_that_removes_all_content_writes_nothing(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    target = workspace / "kept.txt"
    target.write_text("old\n")
    await run1(reviewed_rt, "Read", file_path=str(target))
    approver.accept_with({str(target): None})
    failed, text = await write(reviewed_rt, target, "new\n")
    assert failed and 'kind="state"' in text and "removed all of kept.txt's content" in text
    assert target.read_text() == "old\n"


async def test_a_reviewed_version_of_a_crlf_file_keeps_its_line_endings(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    target = workspace / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\n")
    await run1(reviewed_rt, "Read", file_path=str(target))
    approver.accept_with({str(target): "one\nTWO (by the human)\n"})
    failed, text = await write(reviewed_rt, target, "one\ntwo\nthree\n")
    assert not failed, text
    assert target.read_bytes() == b"one\r\nTWO (by the human)\r\n"
    assert "user edited your proposal" in text
