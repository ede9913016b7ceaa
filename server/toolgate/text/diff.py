"""Unified diffs and structured patches: difflib computes, unidiff represents.

Large files with a small change are common (an Edit of one line in 5 MB), so the common head and tail are
cut off before difflib sees the text, keeping only the context lines a hunk needs.
"""

from __future__ import annotations

import difflib
import itertools
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


_CHUNK = 1 << 16


def _common_prefix(a: str, b: str, known: int = 0) -> int:
    """Length of the common prefix, compared in slices (in C); a slice that differs is halved until found.
    The first `known` characters are taken as shared without comparing them."""
    limit = min(len(a), len(b))
    i, step = min(known, limit), _CHUNK
    while i < limit:
        n = min(step, limit - i)
        if a[i : i + n] == b[i : i + n]:
            i += n
        elif n == 1:
            break
        else:
            step = max(1, n // 2)
    return i


def _common_suffix(a: str, b: str, limit: int, known: int = 0) -> int:
    """Length of the common suffix, at most `limit` characters (the last `known` taken as shared)."""
    i, step = min(known, limit), _CHUNK
    while i < limit:
        n = min(step, limit - i)
        if a[len(a) - i - n : len(a) - i] == b[len(b) - i - n : len(b) - i]:
            i += n
        elif n == 1:
            break
        else:
            step = max(1, n // 2)
    return i


def _trim(a: str, b: str, context: int, same_head: int = 0, same_tail: int = 0) -> tuple[int, int, int]:
    """(start, end in a, end in b): the changed region widened to whole lines plus `context` lines each side."""
    prefix = _common_prefix(a, b, same_head)
    suffix = _common_suffix(a, b, min(len(a), len(b)) - prefix, same_tail)
    start = a.rfind("\n", 0, prefix) + 1  # back to the start of the line where they differ
    for _ in range(context):
        if start == 0:
            break
        start = a.rfind("\n", 0, start - 1) + 1
    end_a, end_b = len(a) - suffix, len(b) - suffix
    # Forward to the end of the line where they stop differing (the same line in both: the tail is shared).
    for _ in range(context + 1):
        if end_a >= len(a):
            break
        next_a = a.find("\n", end_a)
        if next_a == -1:
            end_a, end_b = len(a), len(b)
            break
        step = next_a + 1 - end_a
        end_a, end_b = end_a + step, end_b + step
    return start, end_a, end_b


def unified_diff(
    old: str,
    new: str,
    old_name: str = "a",
    new_name: str = "b",
    context: int = 3,
    *,
    same_head: int = 0,
    same_tail: int = 0,
) -> str:
    """A unified diff of two LF texts ('' when equal), marking a missing final newline as `diff` does.

    `same_head` and `same_tail`: how many characters the caller knows the two texts share at the start and at the
    end (an Edit knows where it spliced); the search for where they differ starts from there, not from the ends
    of megabytes of text. They must be true; the diff is the same with or without them.
    """
    if old == new:
        return ""
    start, end_old, end_new = _trim(old, new, context, same_head, same_tail)
    offset = old.count("\n", 0, start)
    a_mid, b_mid = _split_lf(old[start:end_old]), _split_lf(new[start:end_new])
    out = [f"--- {old_name}\n", f"+++ {new_name}\n"]
    # The first two lines are difflib's own file headers; a removed line "--x" also starts with "---", so the
    # headers are dropped by position, never by prefix.
    for line in itertools.islice(difflib.unified_diff(a_mid, b_mid, n=context, lineterm="\n"), 2, None):
        if line.startswith("@@"):
            line = _shift_header(line, offset)
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


def structured_patch(old: str, new: str, context: int = 3, *, same_head: int = 0, same_tail: int = 0) -> list[Hunk]:
    """The hunks turning `old` into `new`, with `context` lines around each change (see `unified_diff` for the
    two hints)."""
    return _hunks(unified_diff(old, new, context=context, same_head=same_head, same_tail=same_tail))


def _hunks(text: str) -> list[Hunk]:
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
