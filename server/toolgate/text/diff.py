"""Unified diffs and structured patches: difflib computes, unidiff represents.

Large files with a small change are common (an Edit of one line in 5 MB), so the common head and tail are
cut off before difflib sees the text, keeping only the context lines a hunk needs.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from unidiff.patch import PatchSet

NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True, slots=True)
class Hunk:
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]  # each starts with " ", "-" or "+"; no line endings


def _split_lf(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def unified_diff(old: str, new: str, old_name: str = "a", new_name: str = "b", context: int = 3) -> str:
    """A unified diff of two LF texts ('' when equal), marking a missing final newline as `diff` does."""
    if old == new:
        return ""
    a, b = _split_lf(old), _split_lf(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    keep_head = max(head - context, 0)
    keep_tail = max(tail - context, 0)
    a_mid = a[keep_head : len(a) - keep_tail]
    b_mid = b[keep_head : len(b) - keep_tail]
    out = [f"--- {old_name}\n", f"+++ {new_name}\n"]
    for line in difflib.unified_diff(a_mid, b_mid, n=context, lineterm="\n"):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            line = _shift_header(line, keep_head)
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n" + NO_NEWLINE)
    return "".join(out)


def _shift_header(header: str, offset: int) -> str:
    """difflib numbered the cut-down texts; renumber its `@@ -a,b +c,d @@` for the whole files."""
    inner = header.strip().strip("@").strip()
    old_part, new_part = inner.split(" ")

    def shift(part: str) -> str:
        start, _, count = part[1:].partition(",")
        # A zero-length range names the line before it, so shifting is the same for every range.
        number = int(start) + offset
        return f"{part[0]}{number}" + (f",{count}" if count else "")

    return f"@@ {shift(old_part)} {shift(new_part)} @@\n"


def structured_patch(old: str, new: str, context: int = 3) -> list[Hunk]:
    """The hunks turning `old` into `new`, with `context` lines around each change."""
    text = unified_diff(old, new, context=context)
    if not text:
        return []
    patch = PatchSet(text)
    hunks: list[Hunk] = []
    for patched_file in patch:
        for hunk in patched_file:
            lines = tuple(f"{line.line_type}{line.value.rstrip(chr(10))}" for line in hunk if line.line_type in " -+")
            hunks.append(Hunk(hunk.source_start, hunk.source_length, hunk.target_start, hunk.target_length, lines))
    return hunks


def changed_line_range(hunks: list[Hunk]) -> tuple[int, int] | None:
    """First and last line of the new text that an addition touches (None when only lines were removed)."""
    touched: list[int] = []
    for hunk in hunks:
        number = hunk.new_start
        for line in hunk.lines:
            if line.startswith("+"):
                touched.append(number)
            if not line.startswith("-"):
                number += 1
    return (touched[0], touched[-1]) if touched else None
