"""Diffs must describe the change exactly, whatever the lines look like (lines that start with "--", "++", "@@")."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolgate.text.diff import Hunk, changed_line_range, structured_patch, unified_diff

# Lines built from the characters a diff format gives meaning to, so the header and marker cases come up often.
_line = st.text(alphabet="-+@ \\0a", max_size=5)
_text = st.lists(_line, max_size=12).map("\n".join) | st.lists(_line, max_size=12).map(lambda ls: "\n".join(ls) + "\n")


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    return lines[:-1] if text.endswith("\n") else lines if text else []


def _apply(old: str, hunks: list[Hunk]) -> list[str]:
    """Apply hunks the way a reader of the patch would: context and removals must match the old text."""
    old_lines = _lines(old)
    out: list[str] = []
    cursor = 0  # index into old_lines
    for hunk in hunks:
        start = hunk.old_start - 1 if hunk.old_lines else hunk.old_start
        out.extend(old_lines[cursor:start])
        cursor = start
        for line in hunk.lines:
            mark, body = line[0], line[1:]
            if mark in " -":
                assert old_lines[cursor] == body, f"hunk line {line!r} does not match old line {old_lines[cursor]!r}"
                cursor += 1
            if mark in " +":
                out.append(body)
    out.extend(old_lines[cursor:])
    return out


@given(_text, _text)
@example("--00", "--0")  # a removed "--00" is written "---00", which once read as a file header
@example("a\n--- x\n+++ y\nb\n", "a\nb\n")
def test_applying_the_structured_patch_gives_the_new_text(old: str, new: str) -> None:
    hunks = structured_patch(old, new)
    assert (hunks == []) == (old == new)
    for hunk in hunks:
        assert sum(line[0] in " -" for line in hunk.lines) == hunk.old_lines
        assert sum(line[0] in " +" for line in hunk.lines) == hunk.new_lines
    # Final-newline changes are carried by the "\\ No newline" marker, not the hunk lines, so lines are compared.
    assert _apply(old, hunks) == _lines(new)


@given(_text, _text)
@example("x\n--00\ny\n", "x\n--0\ny\n")
def test_every_changed_line_appears_once_in_the_unified_diff(old: str, new: str) -> None:
    body = unified_diff(old, new).splitlines()[2:]  # the two file headers
    removed = [line[1:] for line in body if line.startswith("-")]
    added = [line[1:] for line in body if line.startswith("+")]
    hunks = structured_patch(old, new)
    assert removed == [line[1:] for hunk in hunks for line in hunk.lines if line.startswith("-")]
    assert added == [line[1:] for hunk in hunks for line in hunk.lines if line.startswith("+")]


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("--00", "--0"),
        ("keep\n--- a\n+++ b\n@@ -1 +1 @@\nkeep\n", "keep\n++ changed\nkeep\n"),
        ("one\ntwo", "one\ntwo\n"),  # gains a final newline
        ("one\ntwo\n", "one\ntwo"),  # loses it
        ("\\ backslash\n", "\\ No newline at end of file\n"),
        ("".join(f"line {i}\n" for i in range(40)), "".join(f"line {i}\n" for i in range(40) if i not in (3, 30))),
    ],
)
def test_gnu_patch_applies_the_unified_diff(tmp_path: Path, old: str, new: str) -> None:
    target = tmp_path / "file"
    target.write_bytes(old.encode())
    result = subprocess.run(
        ["patch", "--silent", "--force", str(target)],
        input=unified_diff(old, new).encode(),
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == new.encode()


def test_changed_line_range_names_the_added_lines_in_the_new_text() -> None:
    lines = [f"line {i}\n" for i in range(20)]
    old = "".join(lines)
    new = "".join("changed\n" if i in (5, 12) else line for i, line in enumerate(lines))
    assert changed_line_range(structured_patch(old, new)) == (6, 13)
    assert changed_line_range(structured_patch(old, "".join(lines[:5] + lines[6:]))) is None


def _shared(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


@given(_text, _text, st.integers(0, 30), st.integers(0, 30))
@example("a\nb\nc\n", "a\nB\nc\n", 2, 2)
@example("x\n", "x\nx\n", 2, 0)  # the shared head runs into what was added
def test_known_shared_ends_give_the_same_diff(old: str, new: str, head: int, tail: int) -> None:
    # An Edit tells the diff how much of the ends it left alone; any true hint must leave the diff unchanged.
    prefix = _shared(old, new)
    suffix = _shared(old[::-1], new[::-1])
    head = min(head, prefix)
    tail = min(tail, suffix, min(len(old), len(new)) - head)
    hinted = structured_patch(old, new, same_head=head, same_tail=tail)
    assert hinted == structured_patch(old, new)
    assert unified_diff(old, new, same_head=head, same_tail=tail) == unified_diff(old, new)
