"""Parsing ripgrep's `--null` output into records, in a stable order.

ripgrep searches files in parallel and prints each file's results as one block, in whatever order the
files finish. Pagination with an offset needs the same order on every call, so blocks are sorted by path.
Paths stay bytes here (they are not always valid UTF-8); callers decode what they show.

ripgrep may be given the search root under another name than the model's (an opened folder, `.`; see
`tools/_ripgrep.SearchAt`): `PathPrefix` names its paths back, only where a path starts (a record's start, a
line's start before its NUL), never inside a matched line's text, and where records are split already.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

_BINARY = b": binary file matches"
LineKind = Literal["line", "binary", "other"]
_LINE_PREFIX = re.compile(rb"(\d+)([:-])")


@dataclass(frozen=True, slots=True)
class PathPrefix:
    """Paths ripgrep printed starting with `printed` name `named` + the rest (the root as the model named it)."""

    printed: bytes
    named: bytes

    @property
    def same(self) -> bool:
        return self.printed == self.named

    def __call__(self, raw: bytes) -> bytes:
        return self.named + raw[len(self.printed) :] if raw.startswith(self.printed) else raw


def split_records(data: bytes, separator: bytes, *, partial: bool, names: PathPrefix | None = None) -> list[bytes]:
    """Records ended by `separator`; when the run was stopped early, a last unfinished record is dropped.

    `names`: each record is a path (`--files`, `--files-with-matches`), named back as the model named its root."""
    records = data.split(separator)
    if records and (partial or not records[-1]):
        records.pop()
    if names is not None and not names.same:
        printed, named, cut = names.printed, names.named, len(names.printed)
        records = [named + r[cut:] if r.startswith(printed) else r for r in records]
    return records


@dataclass(frozen=True, slots=True)
class ContentLine:
    path: bytes
    text: bytes  # "12:text" (a match), "12-text" (context), "text" (without -n), or a notice for binary files
    starts_group: bool  # preceded by a `--` break (context groups, and each file when context is shown)
    kind: LineKind = "line"

    def render(self, shown_path: str) -> str:
        if self.kind == "binary":
            return f"{shown_path}: [binary file with matches; its lines are not shown]"
        if self.kind == "other":
            return self.path.decode("utf-8", errors="replace")
        text = self.text.decode("utf-8", errors="replace")
        found = _LINE_PREFIX.match(self.text)
        separator = "-" if found and found.group(2) == b"-" else ":"
        return f"{shown_path}{separator}{text}"


class ContentListing:
    """Content-mode output: the records of each file together, files in path order, materialised by page.

    Only the grouping pass touches every line (with one `startswith` each); records are built only for
    the lines a page shows, so a search with 100k matching lines costs little more than ripgrep itself.
    `names`: how the paths are named back (once per run of lines: the lines themselves are never rewritten).
    """

    def __init__(self, lines: list[bytes], *, with_context: bool, names: PathPrefix | None = None) -> None:
        self._lines = lines
        self._with_context = with_context
        self._names = None if names is None or names.same else names
        # [path, first index, end index, records in range, kind, where the text starts in each line]: one per run
        # of lines of one file
        self._blocks: list[tuple[bytes, int, int, int, LineKind, int]] = []
        self._build()

    def _build(self) -> None:
        lines = self._lines
        names = self._names
        prefix = b"\0\0"  # matches no line
        path = b""
        start = breaks = text_at = 0
        kind: LineKind = "line"
        blocks = self._blocks
        for index, line in enumerate(lines):
            if line.startswith(prefix):
                continue
            if line == b"--":
                breaks += 1
                continue
            if index:
                blocks.append((path, start, index, index - start - breaks, kind, text_at))
            start, breaks = index, 0
            nul = line.find(b"\0")
            if nul >= 0:
                path, kind, text_at = line[:nul], "line", nul + 1
                prefix = line[: nul + 1]
            else:
                # "<path>: binary file matches (…)" for a binary file named explicitly; anything else as is.
                cut = line.rfind(_BINARY)
                path, kind = (line[:cut], "binary") if cut > 0 else (line, "other")
                prefix = b"\0\0"
            if names is not None:
                path = names(path)
        if lines and start < len(lines) and lines[start] != b"--":
            blocks.append((path, start, len(lines), len(lines) - start - breaks, kind, text_at))
        blocks.sort(key=lambda block: block[0])  # stable: one file's runs keep their order

    @property
    def total(self) -> int:
        return sum(block[3] for block in self._blocks)

    @property
    def paths(self) -> list[bytes]:
        """The path of each run of lines (a file's runs may repeat it)."""
        return [block[0] for block in self._blocks]

    def keep_paths(self, keep: Callable[[bytes], bool]) -> None:
        self._blocks = [block for block in self._blocks if keep(block[0])]

    def page(self, start: int, stop: int) -> list[ContentLine]:
        """Records `start` to `stop` (exclusive) in listing order."""
        out: list[ContentLine] = []
        skip = start
        for path, first, end, count, kind, text_at in self._blocks:
            if len(out) >= stop - start:
                break
            if skip >= count:
                skip -= count
                continue
            group = self._with_context
            for index in range(first, end):
                line = self._lines[index]
                if line == b"--":
                    group = True
                    continue
                if skip:
                    skip -= 1
                    group = False
                    continue
                if len(out) >= stop - start:
                    break
                text = line[text_at:] if kind == "line" else b""
                out.append(ContentLine(path, text, group, kind))
                group = False
        return out


def parse_counts(lines: list[bytes], names: PathPrefix | None = None) -> list[tuple[bytes, int]]:
    """`path\\0count` lines as (path, count), sorted by path; `names`: how the paths are named back."""
    rename = None if names is None or names.same else names
    out: list[tuple[bytes, int]] = []
    for line in lines:
        path, _, count = line.rpartition(b"\0")
        if path and count.isdigit():
            out.append((path if rename is None else rename(path), int(count)))
    out.sort()
    return out
