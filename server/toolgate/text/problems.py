"""Which problems an edit introduced: the editor's problems of a file before and after a change, compared.

A problem the edit only moved (its line shifted because lines were added or removed above it) is not new: each
problem from before is carried through the edit's hunks to where its line is now, and an identical problem there
(same severity, source, code, message and column) is the old one. A problem on a line the edit changed cannot be
carried, so one found there is new; so is the same message on any other line. Pure: no I/O.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

Severity = Literal["error", "warning", "information", "hint"]

# The problems the model is told about after an edit: what would stop a build or is likely a mistake.
REPORTED_SEVERITIES: frozenset[Severity] = frozenset({"error", "warning"})
# More new problems than this in one call are summarised by their count (the Problems tool lists them all).
NEW_PROBLEMS_CAP = 20
_ERRORS_FIRST: Mapping[Severity, int] = {"error": 0, "warning": 1}
# Past this many changed lines on either side, lines are not matched one by one (difflib is quadratic there): the
# whole changed middle counts as changed, and its problems as new.
_MATCHED_LINES_LIMIT = 4000


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem as the editor reports it; `line` and `column` are 0-based, the column in UTF-16 code units."""

    line: int
    column: int
    severity: Severity
    message: str
    source: str | None = None
    code: str | None = None

    def same_kind(self) -> tuple[Severity, str | None, str | None, str]:
        return (self.severity, self.source, self.code, self.message)


@dataclass(frozen=True, slots=True)
class FileProblems:
    """The new problems of one changed file, and how to name it to the model."""

    label: str
    text: str  # the file's text now, to turn UTF-16 columns into characters
    problems: Sequence[Problem]


@dataclass(frozen=True, slots=True)
class Baseline:
    """A file's text and problems before a call: what its problems after the call are compared with."""

    text: str
    problems: Sequence[Problem]


PathT = TypeVar("PathT", bound=Hashable)


def baselines_after_moves(before: Mapping[PathT, Baseline], moved_from: Mapping[PathT, PathT]) -> dict[PathT, Baseline]:
    """Each path's baseline once the call has moved files (`moved_from`: new path -> old path). A moved file brought
    its text and problems along, so its baseline is its old path's; without that, every problem it had would count
    as new at its new path. The old path keeps its own (it matters only if the file is still there: a kept copy)."""
    found = dict(before)
    for new_path, old_path in moved_from.items():
        if (origin := before.get(old_path)) is not None:
            found[new_path] = origin
    return found


def _lines(text: str) -> list[str]:
    return text.splitlines()


def line_map(old_text: str, new_text: str) -> Callable[[int], int | None]:
    """Where each 0-based line of `old_text` is in `new_text` when the edit left it unchanged; None when the edit
    changed or removed it."""
    old, new = _lines(old_text), _lines(new_text)
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_mid, new_mid = old[head : len(old) - tail], new[head : len(new) - tail]
    moved: dict[int, int] = {}
    if max(len(old_mid), len(new_mid)) <= _MATCHED_LINES_LIMIT:
        matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
        for block in matcher.get_matching_blocks():
            for offset in range(block.size):
                moved[head + block.a + offset] = head + block.b + offset
    old_tail_start, shift = len(old) - tail, len(new) - len(old)

    def where(line: int) -> int | None:
        if line < head:
            return line
        if line >= old_tail_start:
            return line + shift
        return moved.get(line)

    return where


def new_problems(before: Iterable[Problem], after: Iterable[Problem], old_text: str, new_text: str) -> list[Problem]:
    """The problems of `after` that `before` did not have (carried through the edit), in the order of `after`. Each
    problem from before accounts for one identical problem after, so a copy of an old problem is new."""
    where = line_map(old_text, new_text)
    carried: Counter[tuple[int, int, tuple[Severity, str | None, str | None, str]]] = Counter()
    for problem in before:
        line = where(problem.line)
        if line is not None:
            carried[(line, problem.column, problem.same_kind())] += 1
    found: list[Problem] = []
    for problem in after:
        key = (problem.line, problem.column, problem.same_kind())
        if carried[key] > 0:
            carried[key] -= 1
        else:
            found.append(problem)
    return found


def reported(problems: Iterable[Problem]) -> list[Problem]:
    """The problems worth telling the model about (errors and warnings), errors first, then by place."""
    chosen = [p for p in problems if p.severity in REPORTED_SEVERITIES]
    return sorted(chosen, key=lambda p: (_ERRORS_FIRST.get(p.severity, 2), p.line, p.column))


def utf16_to_column(line_text: str, units: int) -> int:
    """A 0-based UTF-16 offset into `line_text` as a 0-based count of characters (an astral character is one)."""
    count = 0
    for index, char in enumerate(line_text):
        if units <= 0:
            return index
        units -= 2 if ord(char) > 0xFFFF else 1
        count = index + 1
    return count


def _message(problem: Problem) -> str:
    # A multi-line message (TypeScript explains a type mismatch over several lines) stays under its own line.
    return "\n    ".join(line.rstrip() for line in problem.message.strip().splitlines()) or "(no message)"


def problem_line(label: str, text: str, problem: Problem) -> str:
    """`path:line:column severity (source code): message`, with 1-based line and character column."""
    lines = _lines(text)
    line_text = lines[problem.line] if 0 <= problem.line < len(lines) else ""
    column = utf16_to_column(line_text, problem.column) + 1
    origin = " ".join(str(part) for part in (problem.source, problem.code) if part)
    kind = f"{problem.severity} ({origin})" if origin else problem.severity
    return f"{label}:{problem.line + 1}:{column} {kind}: {_message(problem)}"


def fair_shares(sizes: Sequence[int], cap: int) -> list[int]:
    """How many of each list to take so that at most `cap` are taken in all, dealt one at a time to each list that has
    more left (round-robin): a list gets fewer than another only when it has no more."""
    shares = [0] * len(sizes)
    left = cap
    while left > 0:
        open_lists = [index for index, size in enumerate(sizes) if shares[index] < size][:left]
        if not open_lists:
            break
        for index in open_lists:
            shares[index] += 1
        left -= len(open_lists)
    return shares


def _shown(files: Sequence[FileProblems], cap: int) -> list[list[Problem]]:
    """Each file's problems that fit under `cap`: errors dealt round-robin across the files first, then warnings
    with what is left, so one file with many problems cannot hide every other file's (nor an error a warning)."""
    ranks = sorted({_ERRORS_FIRST.get(p.severity, 2) for f in files for p in f.problems})
    shown: list[list[Problem]] = [[] for _ in files]
    left = cap
    for rank in ranks:
        of_rank = [[p for p in f.problems if _ERRORS_FIRST.get(p.severity, 2) == rank] for f in files]
        shares = fair_shares([len(problems) for problems in of_rank], left)
        for taken, problems, share in zip(shown, of_rank, shares, strict=True):
            taken.extend(problems[:share])
        left -= sum(shares)
    return shown


def render_new_problems(files: Sequence[FileProblems], cap: int = NEW_PROBLEMS_CAP) -> str | None:
    """The block a result ends with, or None when no file has a new problem. At most `cap` problems are listed,
    shared fairly between the files (`_shown`); the cap is announced with the total, and each file that has problems
    left out says how many."""
    total = sum(len(f.problems) for f in files)
    if not total:
        return None
    head = "New problems the editor reports after this change"
    if total > cap:
        head += f" (showing {cap} of {total}; the Problems tool lists every one)"
    lines = [head + ":"]
    for file, shown in zip(files, _shown(files, cap), strict=True):
        lines.extend(problem_line(file.label, file.text, p) for p in shown)
        if left_out := len(file.problems) - len(shown):
            lines.append(f"({left_out} more in {file.label} not shown)")
    return "\n".join(lines)
