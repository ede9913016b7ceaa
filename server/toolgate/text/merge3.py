"""A 3-way merge of two edits that are apart, with exactly the answer `git merge-file` gives, or no answer.

`git merge-file` (xdiff's xdl_merge, Myers diff, no indent heuristic, as merge-file runs it) diffs the base
against each side and merges the two edit scripts. Where xdiff's script is certain, so is the merge, and then
it costs no process. A side's script is certain when the side changed one run of lines: xdiff keeps the
longest common head and tail as they are (xdl_trim_ends) and diffs only the middle; when the two middles share
no line, every line of them is changed, and the one group it makes stays where it is (sliding it, in
xdl_change_compact, would need a line equal to the head's or the tail's next line, which the longest head and
tail rule out, or it slides back to the other side's group it is aligned with). Two such runs with at least
one untouched line between them merge cleanly into "base, with both runs replaced".

Everything else (several runs on a side, a middle that shares a line, runs that touch or overlap, so a
conflict or xdiff's own refinement of one) answers None: the caller asks git. A differential test
(tests/unit/checkpoints/test_merge3_differential.py) holds every answer against the real `git merge-file`.
"""

from __future__ import annotations

from dataclasses import dataclass

# git merge-file refuses inputs this large (MAX_XDIFF_SIZE); leave them to it, so that it says so.
MAX_SIZE = 1024 * 1024 * 1023


@dataclass(frozen=True, slots=True)
class _Run:
    """Lines `start`:`end` of the base became `lines`."""

    start: int
    end: int
    lines: list[bytes]


def records(data: bytes) -> list[bytes]:
    """xdiff's lines: each ends after its LF (a CR is part of the line); a last line without one stays as it is."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def merge_apart(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """`git merge-file -p ours base theirs`'s output when it merges cleanly for certain, else None (ask git)."""
    if max(len(base), len(ours), len(theirs)) > MAX_SIZE:
        return None
    if ours == base:
        return theirs  # xdl_merge: no change on our side, theirs whole
    if theirs == base or ours == theirs:
        return ours  # no change on theirs; or the same changes on both sides, never a conflict
    base_lines = records(base)
    mine, other = _one_run(base_lines, records(ours)), _one_run(base_lines, records(theirs))
    if mine is None or other is None:
        return None
    first, second = (mine, other) if mine.start <= other.start else (other, mine)
    if first.end >= second.start:
        return None  # touching or overlapping: a conflict, or xdiff's refinement of one
    between = base_lines[first.end : second.start]
    return b"".join([*base_lines[: first.start], *first.lines, *between, *second.lines, *base_lines[second.end :]])


def _one_run(base: list[bytes], side: list[bytes]) -> _Run | None:
    """The side's one changed run, when xdiff's script for it is that run for certain (see the module's doc)."""
    limit = min(len(base), len(side))
    head = 0
    while head < limit and base[head] == side[head]:
        head += 1
    tail = 0
    while tail < limit - head and base[-1 - tail] == side[-1 - tail]:
        tail += 1
    old, new = base[head : len(base) - tail], side[head : len(side) - tail]
    if old and new and not set(old).isdisjoint(new):
        return None  # a line kept inside the run: the script's shape is xdiff's choice
    return _Run(head, len(base) - tail, new)
