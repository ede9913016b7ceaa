"""ApplyPatch: Codex's 23 conformance scenarios (015 inverted: all-or-nothing), its parser, seek and apply
cases, and toolgate's own rules (read before update, staleness, all-or-nothing, review)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolgate.core.permission import ReviewAnswer, ReviewedFile
from toolgate.runtime import Runtime
from toolgate.testing import AllowingApprover, run1
from toolgate.text.patch_format import AddFile, DeleteFile, PatchSyntaxError, UpdateFile, parse_patch, seek_sequence
from toolgate.tools import _write
from toolgate.tools import apply_patch as apply_patch_module

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "apply_patch"
SCENARIOS = sorted(p for p in (FIXTURES / "scenarios").iterdir() if p.is_dir())
# Toolgate applies patches all-or-nothing: a failing patch leaves the input untouched.
ALL_OR_NOTHING = {"015_failure_after_partial_success_leaves_changes"}


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and directory (None) under root, by relative path."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        found[str(path.relative_to(root))] = path.read_bytes() if path.is_file() else None
    return found


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


async def read_every_file(rt: Runtime, root: Path) -> None:
    for path in files_under(root):
        result = await run1(rt, "Read", file_path=str(path))
        assert not result.is_error, result.text()


def test_there_are_23_scenarios() -> None:
    assert len(SCENARIOS) == 23


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[p.name for p in SCENARIOS])
async def test_codex_scenario(rt: Runtime, workspace: Path, scenario: Path) -> None:
    if (scenario / "input").is_dir():
        shutil.copytree(scenario / "input", workspace, dirs_exist_ok=True)
    before = tree(workspace)
    await read_every_file(rt, workspace)  # toolgate's rule: existing files are read before they are patched
    patch = (scenario / "patch.txt").read_text(encoding="utf-8")
    result = await run1(rt, "ApplyPatch", patch=patch)
    if scenario.name in ALL_OR_NOTHING:
        assert result.is_error
        assert tree(workspace) == before
        return
    expected = tree(scenario / "expected")
    assert tree(workspace) == expected, result.text()
    # A scenario whose expected tree is its input is one where the patch must fail, and say so.
    assert result.is_error == (expected == before), result.text()


# --- the parser, seek and apply cases transcribed from Codex's unit tests --------------------------------


def _as_codex(op: AddFile | DeleteFile | UpdateFile) -> dict[str, Any]:
    if isinstance(op, AddFile):
        return {"AddFile": {"path": op.path, "contents": op.contents}}
    if isinstance(op, DeleteFile):
        return {"DeleteFile": {"path": op.path}}
    return {
        "UpdateFile": {
            "path": op.path,
            "move_path": op.move_path,
            "chunks": [
                {
                    "change_context": c.change_context,
                    "old_lines": c.old_lines,
                    "new_lines": c.new_lines,
                    "is_end_of_file": c.is_end_of_file,
                }
                for c in op.chunks
            ],
        }
    }


PARSER_CASES = json.loads((FIXTURES / "parser_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", PARSER_CASES, ids=[f"{i}-{c['mode']}" for i, c in enumerate(PARSER_CASES)])
def test_parser_case(case: dict[str, Any]) -> None:
    lenient = case["mode"] == "lenient"
    if "error" in case:
        with pytest.raises(PatchSyntaxError):
            parse_patch(case["patch"], lenient=lenient)
        return
    assert [_as_codex(op) for op in parse_patch(case["patch"], lenient=lenient)] == case["hunks"]


SEEK = json.loads((FIXTURES / "seek_sequence_cases.json").read_text())


@pytest.mark.parametrize("case", SEEK["cases"])
def test_seek_case(case: dict[str, Any]) -> None:
    assert seek_sequence(case["lines"], case["pattern"], case["start"], case["eof"]) == case["expected"]


@pytest.mark.parametrize(
    ("group", "ascii_char"), [("to_hyphen", "-"), ("to_single_quote", "'"), ("to_double_quote", '"'), ("to_space", " ")]
)
def test_seek_folds_unicode_punctuation(group: str, ascii_char: str) -> None:
    for char in SEEK["unicode_normalisation"][group]:
        assert seek_sequence([f"a{char}b"], [f"a{ascii_char}b"], 0, False) == 0, repr(char)


LIB_CASES = json.loads((FIXTURES / "lib_rs_cases.json").read_text())["apply_cases"]
BYTE_CASES = json.loads((FIXTURES / "expected_cli_output.json").read_text())["extra_byte_level_cases"]


@pytest.mark.parametrize("case", LIB_CASES, ids=[c["name"] for c in LIB_CASES])
async def test_lib_case(rt: Runtime, workspace: Path, case: dict[str, Any]) -> None:
    for name, content in case["files"].items():
        (workspace / name).write_bytes(content.encode())
    await read_every_file(rt, workspace)
    result = await run1(rt, "ApplyPatch", patch=case["patch"])
    assert not result.is_error, result.text()
    expected = {name: content.encode() for name, content in case["expected_files"].items()}
    assert tree(workspace) == expected


@pytest.mark.parametrize("case", BYTE_CASES, ids=[c["name"] for c in BYTE_CASES])
async def test_byte_level_case(rt: Runtime, workspace: Path, case: dict[str, Any]) -> None:
    target = workspace / case["file"]
    target.write_bytes(case["input_bytes"].encode())
    await read_every_file(rt, workspace)
    result = await run1(rt, "ApplyPatch", patch=case["patch"])
    assert not result.is_error, result.text()
    assert target.read_bytes() == case["expected_bytes"].encode()


# --- toolgate's own rules ---------------------------------------------------------------------------------

UPDATE_A = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch\n"


async def test_update_of_an_unread_file_is_refused(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    result = await run1(rt, "ApplyPatch", patch=UPDATE_A)
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "a.txt" in result.text()
        and "Read it first" in result.text()
    )
    assert (workspace / "a.txt").read_text() == "alpha\n"


async def test_adding_a_new_file_needs_no_read(rt: Runtime, workspace: Path) -> None:
    result = await run1(rt, "ApplyPatch", patch="*** Begin Patch\n*** Add File: new.txt\n+hi\n*** End Patch")
    assert not result.is_error and "A new.txt" in result.text()
    assert (workspace / "new.txt").read_text() == "hi\n"


async def test_a_stale_file_stops_the_whole_patch(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    await read_every_file(rt, workspace)
    (workspace / "b.txt").write_text("beta changed\n")
    os.utime(workspace / "b.txt", ns=(1, (workspace / "b.txt").stat().st_mtime_ns + 5_000_000_000))
    before = tree(workspace)
    patch = (
        "*** Begin Patch\n*** Add File: c.txt\n+new\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n"
        "*** Update File: b.txt\n@@\n-beta changed\n+BETA\n*** End Patch"
    )
    result = await run1(rt, "ApplyPatch", patch=patch)
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "b.txt" in result.text()
        and "Read it again" in result.text()
    )
    assert tree(workspace) == before


async def test_a_missing_hunk_names_file_and_hunk_and_changes_nothing(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    await read_every_file(rt, workspace)
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n@@\n-four\n+FOUR\n*** End Patch"
    result = await run1(rt, "ApplyPatch", patch=patch)
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "a.txt, hunk 2 of 2" in result.text()
        and "four" in result.text()
    )
    assert (workspace / "a.txt").read_text() == "one\ntwo\nthree\n"


async def test_unparsable_patch_is_invalid_input(rt: Runtime, workspace: Path) -> None:
    result = await run1(rt, "ApplyPatch", patch="*** Begin Patch\n*** Frobnicate File: x\n*** End Patch")
    assert result.is_error and 'kind="invalid_input"' in result.text() and "line 2" in result.text()


async def test_context_lines_matched_loosely_keep_their_bytes(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.py").write_text("def f():   \n    return 1\n")
    await read_every_file(rt, workspace)
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n def f():\n-    return 1\n+    return 2\n*** End Patch"
    result = await run1(rt, "ApplyPatch", patch=patch)
    assert not result.is_error, result.text()
    assert (workspace / "a.py").read_text() == "def f():   \n    return 2\n"


async def test_patched_files_need_no_new_read_and_moves_forget_the_source(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    await read_every_file(rt, workspace)
    assert not (await run1(rt, "ApplyPatch", patch=UPDATE_A)).is_error
    edit = await run1(rt, "Edit", file_path="a.txt", old_string="ALPHA", new_string="alpha again")
    assert not edit.is_error, edit.text()
    move = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-alpha again\n+moved\n*** End Patch"
    assert not (await run1(rt, "ApplyPatch", patch=move)).is_error
    assert str(workspace / "a.txt") not in rt.session.file_state
    assert (workspace / "b.txt").read_text() == "moved\n" and not (workspace / "a.txt").exists()


async def test_encoding_and_bom_are_kept(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    target.write_bytes(b"\xef\xbb\xbfcaf\xc3\xa9\r\nalpha\r\n")
    await read_every_file(rt, workspace)
    result = await run1(rt, "ApplyPatch", patch=UPDATE_A)
    assert not result.is_error, result.text()
    assert target.read_bytes() == b"\xef\xbb\xbfcaf\xc3\xa9\r\nALPHA\r\n"


async def test_review_shows_every_file_and_applies_the_users_version(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "old.txt").write_text("obsolete\n")
    await read_every_file(reviewed_rt, workspace)
    approver.accept_with({str(workspace / "a.txt"): "ALPHA, as the user wants it\n"})
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Delete File: old.txt\n*** End Patch"
    result = await run1(reviewed_rt, "ApplyPatch", patch=patch)
    assert not result.is_error, result.text()
    [request] = approver.reviews
    assert {(Path(f.path).name, f.original, f.proposed) for f in request.files} == {
        ("a.txt", "alpha\n", "ALPHA\n"),
        ("old.txt", "obsolete\n", None),
    }
    assert (workspace / "a.txt").read_text() == "ALPHA, as the user wants it\n"
    assert not (workspace / "old.txt").exists()
    assert "user edited your proposal" in result.text()


async def test_a_moves_target_left_out_alone_changes_nothing(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("keep me\n")
    await read_every_file(reviewed_rt, workspace)
    target = str(workspace / "new.txt")
    approver.reviewer = lambda request: ReviewAnswer(
        decision="accept", files=[ReviewedFile(path=target, content=None, skipped=True)]
    )
    patch = "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n@@\n-keep me\n+kept\n*** End Patch"
    result = await run1(reviewed_rt, "ApplyPatch", patch=patch)
    assert result.is_error and "that would lose the file, so nothing was changed" in result.text()
    assert tree(workspace) == {"old.txt": b"keep me\n"}


async def test_a_review_that_leaves_every_file_out_says_nothing_was_applied(
    reviewed_rt: Runtime, approver: AllowingApprover, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("keep me\n")
    await read_every_file(reviewed_rt, workspace)
    approver.reviewer = lambda request: ReviewAnswer(
        decision="accept", files=[ReviewedFile(path=f.path, content=None, skipped=True) for f in request.files]
    )
    patch = "*** Begin Patch\n*** Add File: new.txt\n+n\n*** Delete File: old.txt\n*** End Patch"
    result = await run1(reviewed_rt, "ApplyPatch", patch=patch)
    assert not result.is_error, result.text()
    assert tree(workspace) == {"old.txt": b"keep me\n"}
    assert result.text().splitlines() == [
        "Nothing was applied: the user left every file of the patch as it was.",
        "The user chose not to create new.txt: it does not exist.",
        "The user rejected the deletion of old.txt: it was kept, unchanged.",
    ]


async def test_a_failure_while_renaming_puts_back_what_was_already_replaced(
    rt: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    (workspace / "gone.txt").write_text("gone\n")
    await read_every_file(rt, workspace)
    before = tree(workspace)
    real_publish = apply_patch_module.publish
    calls = {"n": 0}

    def publish_then_fail(staged: _write.Staged) -> os.stat_result:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real_publish(staged)

    monkeypatch.setattr(apply_patch_module, "publish", publish_then_fail)
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Update File: b.txt\n@@\n-beta\n+BETA\n"
        "*** Delete File: gone.txt\n*** Add File: new.txt\n+new\n*** End Patch"
    )
    result = await run1(rt, "ApplyPatch", patch=patch)
    assert (
        result.is_error
        and 'kind="state"' in result.text()
        and "No space left on device" in result.text()
        and "put back" in result.text()
    )
    assert tree(workspace) == before  # a.txt was replaced, then restored; no temp files remain
