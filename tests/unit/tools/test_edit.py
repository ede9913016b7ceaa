"""Edit through the real runtime: every validation branch in order, literal replacement, write-path rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolgate.core import atomic_file
from toolgate.core.documents import OPEN_DOCUMENTS
from toolgate.core.permission import ReviewAnswer, ReviewRequest
from toolgate.runtime import Runtime
from toolgate.testing import AllowingApprover, run1
from toolgate.text.diff import structured_patch
from toolgate.tools.edit import EditDone, EditInput, EditTool


class DirtyDocuments:
    def __init__(self, *dirty: Path) -> None:
        self.dirty = set(dirty)

    def is_dirty(self, path: Path) -> bool:
        return path in self.dirty

    def text(self, path: Path) -> str | None:
        return None


def snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


async def read(rt: Runtime, path: Path | str, **kw: object) -> str:
    result = await run1(rt, "Read", file_path=str(path), **kw)
    assert not result.is_error, result.text()
    return result.text()


async def edit(rt: Runtime, path: Path | str, old: str, new: str, **kw: object) -> tuple[bool, str]:
    result = await run1(rt, "Edit", file_path=str(path), old_string=old, new_string=new, **kw)
    return result.is_error, result.text()


# --- validation, in the order the issue lists it -------------------------------------------------------------


async def test_identical_strings_come_first_even_for_a_missing_file(rt: Runtime, workspace: Path) -> None:
    failed, text = await edit(rt, workspace / "missing.txt", "same", "same")
    assert failed and 'kind="state"' in text and "identical" in text


async def test_missing_file_says_did_you_mean(rt: Runtime, workspace: Path) -> None:
    (workspace / "config.yaml").write_text("a: 1\n")
    failed, text = await edit(rt, workspace / "config.yml", "a: 1", "a: 2")
    assert failed and 'kind="state"' in text and "No file exists" in text and "config.yaml" in text


async def test_empty_old_string_creates_a_missing_file_and_its_directories(rt: Runtime, workspace: Path) -> None:
    failed, text = await edit(rt, workspace / "deep/er/new.py", "", "print('hi')\n")
    assert not failed and "Created deep/er/new.py" in text
    assert (workspace / "deep/er/new.py").read_bytes() == b"print('hi')\n"


async def test_empty_old_string_on_a_non_empty_file_precedes_read_first(rt: Runtime, workspace: Path) -> None:
    target = workspace / "exists.txt"
    target.write_text("content\n")
    before = snapshot(target)
    failed, text = await edit(rt, target, "", "x")
    assert failed and 'kind="state"' in text and "already exists and is not empty" in text
    assert snapshot(target) == before


async def test_notebook_is_refused_before_read_first(rt: Runtime, workspace: Path) -> None:
    target = workspace / "nb.ipynb"
    target.write_text('{"cells": []}\n')
    failed, text = await edit(rt, target, "cells", "x")
    assert failed and 'kind="state"' in text and "NotebookEdit" in text


async def test_never_read_says_read_first_before_looking_for_the_string(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\n")
    before = snapshot(target)
    failed, text = await edit(rt, target, "not there", "x")
    assert failed and 'kind="state"' in text and "has not been read" in text and "Read it first" in text
    assert "the restarted sidecar keeps no record" in text  # why a Read shown earlier in the chat does not count
    assert snapshot(target) == before


async def test_stale_precedes_not_found(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\n")
    await read(rt, target)
    target.write_text("changed by someone\n")
    os.utime(target, ns=(1, target.stat().st_mtime_ns + 5_000_000_000))
    before = snapshot(target)
    failed, text = await edit(rt, target, "not there", "x")
    assert (
        failed
        and 'kind="state"' in text
        and "changed on disk since you last read it" in text
        and "Read it again" in text
    )
    assert snapshot(target) == before


async def test_touched_but_unchanged_after_a_full_read_is_not_stale(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\n")
    await read(rt, target)
    os.utime(target, ns=(1, target.stat().st_mtime_ns + 5_000_000_000))
    failed, text = await edit(rt, target, "alpha", "beta")
    assert not failed, text
    assert target.read_text() == "beta\n"


async def test_touched_after_a_partial_read_is_stale(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\nbeta\ngamma\n")
    await read(rt, target, offset=1, limit=1)
    os.utime(target, ns=(1, target.stat().st_mtime_ns + 5_000_000_000))
    failed, text = await edit(rt, target, "alpha", "x")
    assert failed and 'kind="state"' in text and "changed on disk" in text


async def test_an_older_restored_file_is_stale(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("version 2\n")
    await read(rt, target)
    mtime = target.stat().st_mtime_ns
    target.write_text("version 1\n")  # same size, restored from a backup with an older timestamp
    os.utime(target, ns=(1, mtime - 10_000_000_000))
    failed, text = await edit(rt, target, "version", "v")
    assert failed and 'kind="state"' in text and "changed on disk" in text
    assert target.read_text() == "version 1\n"


async def test_dirty_in_editor_precedes_not_found(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\n")
    await read(rt, target)
    rt.session.deps.override(OPEN_DOCUMENTS, DirtyDocuments(target))
    before = snapshot(target)
    failed, text = await edit(rt, target, "not there", "x")
    assert failed and 'kind="state"' in text and "unsaved changes in the editor" in text and "save or revert" in text
    assert snapshot(target) == before


async def test_not_found_lists_the_closest_lines_with_numbers(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.py"
    target.write_text("import os\n\ndef compute_total(items):\n    return sum(items)\n")
    await read(rt, target)
    failed, text = await edit(rt, target, "def compute_totals(items):", "x")
    assert failed and 'kind="state"' in text and "not found" in text
    assert "3\tdef compute_total(items):" in text


async def test_not_found_spots_line_number_prefixes(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.py"
    target.write_text("x = 1\ny = 2\n")
    await read(rt, target)
    failed, text = await edit(rt, target, "1\tx = 1\n2\ty = 2", "z")
    assert failed and 'kind="state"' in text and "line-number prefixes" in text


async def test_not_found_spots_whitespace_differences(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.py"
    target.write_text("if x:\n\treturn 1\n")
    await read(rt, target)
    failed, text = await edit(rt, target, "if x:\n    return 1", "z")
    assert failed and 'kind="state"' in text and "whitespace is ignored" in text


async def test_several_matches_give_count_and_lines(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("foo\nbar\nfoo\nbaz\nfoo\n")
    await read(rt, target)
    before = snapshot(target)
    failed, text = await edit(rt, target, "foo", "qux")
    assert (
        failed
        and 'kind="state"' in text
        and "occurs 3 times" in text
        and "lines 1, 3, 5" in text
        and "replace_all" in text
    )
    assert snapshot(target) == before
    failed, text = await edit(rt, target, "foo", "qux", replace_all=True)
    assert not failed and "replaced all 3 occurrences" in text
    assert target.read_text() == "qux\nbar\nqux\nbaz\nqux\n"


# --- the replacement ---------------------------------------------------------------------------------------


async def test_replacement_is_literal(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("name = value\n")
    await read(rt, target)
    failed, _ = await edit(rt, target, "value", r"$1 \1 $& \g<0> \n")
    assert not failed
    assert target.read_text() == "name = $1 \\1 $& \\g<0> \\n\n"


async def test_deleting_whole_lines_removes_their_newline(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("keep\ndrop me\nkeep too\n")
    await read(rt, target)
    failed, _ = await edit(rt, target, "drop me", "")
    assert not failed
    assert target.read_text() == "keep\nkeep too\n"


async def test_deleting_inside_a_line_keeps_the_line_break(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.py"
    target.write_text("x = 1  # note\ny = 2\n")
    await read(rt, target)
    failed, _ = await edit(rt, target, "  # note", "")
    assert not failed
    assert target.read_text() == "x = 1\ny = 2\n"


async def test_a_second_edit_needs_no_new_read_and_read_shows_the_result(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("one\ntwo\n")
    await read(rt, target)
    assert not (await edit(rt, target, "one", "ONE"))[0]
    assert not (await edit(rt, target, "two", "TWO"))[0]
    assert await read(rt, target) == "1\tONE\n2\tTWO"


async def test_internal_data_has_patch_and_original(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("".join(f"line {i}\n" for i in range(1, 21)))
    await read(rt, target)
    tool = EditTool()
    ctx = rt.runner.new_context("t1")
    tool_input = EditInput(file_path=str(target), old_string="line 10\n", new_string="line ten\n")
    await tool.validate(tool_input, ctx)
    data = await tool.call(tool_input, ctx)
    assert isinstance(data, EditDone)
    assert data.original is not None and data.original.startswith("line 1\n")
    [hunk] = data.patch
    assert (hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines) == (7, 7, 7, 7)
    assert hunk.lines[:3] == (" line 7", " line 8", " line 9") and hunk.lines[3:5] == ("-line 10", "+line ten")
    assert not data.user_modified


@pytest.mark.parametrize(
    ("old", "new", "replace_all"),
    [
        ("line 3\n", "", False),  # a whole line deleted: its newline goes too
        ("line 3", "", False),  # inside a line: the newline stays
        ("line 1", "first", False),  # at the very start
        ("line 9\n", "nine\nmore\n", False),  # at the very end
        ("line", "LINE", True),  # every line
        ("\nline 5", "", False),  # the end of one line and the next line
    ],
)
async def test_the_patch_computed_around_the_change_is_the_full_diff(
    rt: Runtime, workspace: Path, old: str, new: str, replace_all: bool
) -> None:
    # The Edit tells the diff which ends it left alone; the patch must be the one a diff of the whole texts gives.
    target = workspace / "a.txt"
    target.write_text("".join(f"line {i}\n" for i in range(1, 10)))
    await read(rt, target)
    tool = EditTool()
    ctx = rt.runner.new_context("t1")
    tool_input = EditInput(file_path=str(target), old_string=old, new_string=new, replace_all=replace_all)
    await tool.validate(tool_input, ctx)
    data = await tool.call(tool_input, ctx)
    assert data.original is not None
    assert data.patch == structured_patch(data.original, target.read_text())


# --- the write path ----------------------------------------------------------------------------------------


async def test_symlink_is_written_through(rt: Runtime, workspace: Path) -> None:
    real = workspace / "real.txt"
    real.write_text("alpha\n")
    link = workspace / "link.txt"
    link.symlink_to(real)
    await read(rt, link)
    assert not (await edit(rt, link, "alpha", "beta"))[0]
    assert link.is_symlink() and real.read_text() == "beta\n"


async def test_mode_is_kept(rt: Runtime, workspace: Path) -> None:
    target = workspace / "run.sh"
    target.write_text("echo hi\n")
    target.chmod(0o751)
    await read(rt, target)
    assert not (await edit(rt, target, "hi", "there"))[0]
    assert target.stat().st_mode & 0o7777 == 0o751


async def test_read_only_file_is_refused(rt: Runtime, workspace: Path) -> None:
    target = workspace / "locked.txt"
    target.write_text("alpha\n")
    target.chmod(0o444)
    await read(rt, target)
    before = snapshot(target)
    failed, text = await edit(rt, target, "alpha", "beta")
    assert failed and 'kind="state"' in text and "read-only" in text
    assert snapshot(target) == before


async def test_file_changing_during_the_write_is_left_alone(
    rt: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\n")
    await read(rt, target)
    real_flush = atomic_file._flush_to_disk

    def flush_while_someone_else_writes(handle: object) -> None:
        real_flush(handle)  # type: ignore[arg-type]
        target.write_text("written by another program at the same moment\n")

    monkeypatch.setattr(atomic_file, "_flush_to_disk", flush_while_someone_else_writes)
    failed, text = await edit(rt, target, "alpha", "beta")
    assert failed and 'kind="state"' in text and "while it was being written" in text
    assert target.read_text() == "written by another program at the same moment\n"
    assert os.listdir(workspace) == ["a.txt"]  # no temp file left behind


async def test_nul_in_path_is_refused(rt: Runtime, workspace: Path) -> None:
    failed, text = await edit(rt, "a\x00b.txt", "x", "y")
    assert failed and 'kind="state"' in text and "NUL" in text


async def test_huge_old_string_is_a_quick_clear_error(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_text("small file\n")
    await read(rt, target)
    failed, text = await edit(rt, target, "x" * 10_000_000, "y")
    assert failed and 'kind="state"' in text and "longer than the whole file" in text
    assert len(text) < 1000


async def test_undecodable_file_is_refused(rt: Runtime, workspace: Path) -> None:
    target = workspace / "bad.txt"
    target.write_bytes(b"\xef\xbb\xbfok\n")
    await read(rt, target)
    target.write_bytes(b"\xef\xbb\xbf\xff\xfe broken utf-8 after a BOM\n")
    before = snapshot(target)
    failed, text = await edit(rt, target, "broken", "x")
    assert failed and 'kind="state"' in text and "cannot be decoded" in text
    assert snapshot(target) == before


async def test_binary_file_is_refused(rt: Runtime, workspace: Path) -> None:
    target = workspace / "blob.txt"
    target.write_bytes(b"text\n")
    await read(rt, target)
    target.write_bytes(b"text\x00\x01\x02\n")
    failed, text = await edit(rt, target, "text", "x")
    assert failed and 'kind="state"' in text and "binary" in text


async def test_character_the_encoding_cannot_hold_is_refused(rt: Runtime, workspace: Path) -> None:
    target = workspace / "legacy.txt"
    target.write_bytes("caf\xe9\n".encode("cp1252"))
    await read(rt, target)
    before = snapshot(target)
    failed, text = await edit(rt, target, "café", "café 😀")
    assert failed and 'kind="state"' in text and "cp1252" in text and "U+1F600" in text
    assert snapshot(target) == before


# --- diff review -----------------------------------------------------------------------------------------


async def test_review_sees_full_texts_and_user_changes_are_written_and_reported(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\nbeta\n")
    await read(reviewed_rt, target)
    approver.accept_with({str(target): "alpha\nBETA (reviewed)\n"})
    failed, text = await edit(reviewed_rt, target, "beta", "BETA")
    assert not failed, text
    [request] = approver.reviews
    [proposal] = request.files
    assert (proposal.original, proposal.proposed) == ("alpha\nbeta\n", "alpha\nBETA\n")
    assert target.read_text() == "alpha\nBETA (reviewed)\n"
    assert "user edited your proposal" in text and "-BETA" in text and "+BETA (reviewed)" in text
    # The record is of what was written: the next edit works on the user's version without a Read.
    assert not (await edit(reviewed_rt, target, "(reviewed)", "(ok)"))[0]


@pytest.mark.parametrize(
    ("original", "users_version", "keep_mtime"),
    [
        ("alpha\n", "alpha, edited by the user while the review was open\n", False),
        # What validate loaded is reused by the final check only while the file is provably the same one: a
        # rewrite of the same size whose mtime is put back still moves its ctime, so the final check reads it again.
        ("alpha\nbeta\n", "alpha\nBETA\n", True),
    ],
)
async def test_a_change_on_disk_during_review_is_caught_by_the_final_check(
    reviewed_rt: Runtime,
    approver: AllowingApprover,
    workspace: Path,
    original: str,
    users_version: str,
    keep_mtime: bool,
) -> None:
    target = workspace / "a.txt"
    target.write_text(original)
    await read(reviewed_rt, target)

    def user_saves_another_version_meanwhile(request: ReviewRequest) -> ReviewAnswer:
        mtime = target.stat().st_mtime_ns
        target.write_text(users_version)
        os.utime(target, ns=(mtime, mtime) if keep_mtime else (1, target.stat().st_mtime_ns + 5_000_000_000))
        return ReviewAnswer(decision="accept")

    approver.reviewer = user_saves_another_version_meanwhile
    failed, text = await edit(reviewed_rt, target, "alpha", "gamma")
    assert failed and 'kind="state"' in text and "changed on disk" in text
    assert target.read_text() == users_version


async def test_rejected_review_writes_nothing(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    target = workspace / "a.txt"
    target.write_text("alpha\n")
    await read(reviewed_rt, target)
    approver.reviewer = lambda _r: ReviewAnswer(decision="reject")
    before = snapshot(target)
    failed, text = await edit(reviewed_rt, target, "alpha", "beta")
    assert failed and 'kind="permission"' in text
    assert snapshot(target) == before


async def test_crlf_typed_by_the_model_matches_a_crlf_file(rt: Runtime, workspace: Path) -> None:
    target = workspace / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await read(rt, target)
    failed, text = await edit(rt, target, "one\r\ntwo", "uno\r\ndos")
    assert not failed, text
    assert target.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_unwritable_directory_is_a_clear_error(rt: Runtime, workspace: Path) -> None:
    locked = workspace / "locked"
    locked.mkdir()
    target = locked / "a.txt"
    target.write_text("alpha\n")
    locked.chmod(0o555)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running with privileges that ignore directory modes")
        await read(rt, target)
        failed, text = await edit(rt, target, "alpha", "beta")
        assert failed and 'kind="state"' in text and "Permission denied" in text
        assert target.read_text() == "alpha\n"
    finally:
        locked.chmod(0o755)
