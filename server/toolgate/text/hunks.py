"""One hunk of a change, taken back or kept on its own: the changes bar's per-hunk Undo and Keep.

A change (`old` → `new`) is cut into hunks: each run of changed lines, with no context merged in, so that a
person can undo one edit without its neighbours. A hunk remembers a few lines around it; reversing it in a
file that has changed since looks for its lines where they were, then anywhere (once, unambiguously), and
otherwise refuses: the person changed those lines (or the ones around them), and a silent guess could eat
their work. Lines keep their endings, so a file's bytes outside the hunk never change.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

CONTEXT = 2  # lines kept on each side to find a hunk again; a pure insertion has only these


class HunkConflict(Exception):
    """The hunk's lines are no longer where (or what) they were; the message says so in the person's terms."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines `old_start`… of the old text (`old`) became lines `new_start`… of the new (`new`); 0-based.
    `before` and `after`: up to CONTEXT unchanged lines around it, short of the next hunk (the same on both
    sides); empty only at the start or the end of the file, which then anchors it."""

    old_start: int
    old: tuple[str, ...]
    new_start: int
    new: tuple[str, ...]
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()


def split_keeping_ends(text: str) -> list[str]:
    """Lines split on LF, each with its ending ("\\r\\n" stays whole); a last line without one stays as it is."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def hunks_between(old: str, new: str) -> list[Hunk]:
    """Every run of changed lines from `old` to `new`, in order."""
    a, b = split_keeping_ends(old), split_keeping_ends(new)
    found: list[Hunk] = []
    opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for at, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            continue
        # Context stops at the neighbouring hunks: it is the same on both sides, so either side can be found.
        first = opcodes[at - 1][3] if at > 0 else j1
        last = opcodes[at + 1][4] if at + 1 < len(opcodes) else j2
        found.append(
            Hunk(
                old_start=i1,
                old=tuple(a[i1:i2]),
                new_start=j1,
                new=tuple(b[j1:j2]),
                before=tuple(b[max(first, j1 - CONTEXT) : j1]),
                after=tuple(b[j2 : min(last, j2 + CONTEXT)]),
            )
        )
    return found


def reverse_hunk(current: str, hunk: Hunk) -> str:
    """`current` with this hunk's new lines put back to its old ones. Raises HunkConflict."""
    return _replace(current, hunk.new_start, hunk.new, hunk.old, hunk)


def apply_hunk(text: str, hunk: Hunk) -> str:
    """`text` (the old side) with this hunk's change made. Raises HunkConflict."""
    return _replace(text, hunk.old_start, hunk.old, hunk.new, hunk)


def count_changes(hunks: list[Hunk]) -> tuple[int, int]:
    """Lines added and lines removed, as "+a −b" counts them."""
    return sum(len(h.new) for h in hunks), sum(len(h.old) for h in hunks)


def _replace(text: str, at: int, find: tuple[str, ...], put: tuple[str, ...], hunk: Hunk) -> str:
    lines = split_keeping_ends(text)
    window = [*hunk.before, *find, *hunk.after]
    start = at - len(hunk.before)

    def fits(i: int) -> bool:
        # No context on a side means the hunk touched that end of the file: it must still be there.
        at_start = bool(hunk.before) or i == 0
        at_end = bool(hunk.after) or i + len(window) == len(lines)
        return at_start and at_end and _matches(lines, i, window)

    if not fits(start):
        places = [i for i in range(len(lines) - len(window) + 1) if fits(i)]
        if len(places) != 1:
            where = f"line {at + 1}"
            raise HunkConflict(
                f"the lines the agent changed at {where} were edited since"
                if not places
                else f"the lines the agent changed at {where} now appear {len(places)} times"
            )
        start = places[0]
    middle = start + len(hunk.before)
    return "".join([*lines[:middle], *put, *lines[middle + len(find) :]])


def _matches(lines: list[str], start: int, window: list[str]) -> bool:
    return start >= 0 and lines[start : start + len(window)] == window
