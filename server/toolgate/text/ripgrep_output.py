"""Parsing ripgrep's `--null` output into records, in a stable order.

ripgrep searches files in parallel and prints each file's results as one block, in whatever order the
files finish. Pagination with an offset needs the same order on every call, so blocks are sorted by path.
Paths stay bytes here (they are not always valid UTF-8); callers decode what they show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_BINARY = b": binary file matches"
LineKind = Literal["line", "binary", "other"]
_LINE_PREFIX = re.compile(rb"(\d+)([:-])")


def split_records(data: bytes, separator: bytes, *, partial: bool) -> list[bytes]:
    """Records ended by `separator`; when the run was stopped early, a last unfinished record is dropped."""
    records = data.split(separator)
    if records and (partial or not records[-1]):
        records.pop()
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


def parse_content(lines: list[bytes], *, with_context: bool) -> list[ContentLine]:
    """`path\\0rest` lines (and `--` breaks, and binary-file notices) as records sorted by path."""
    blocks: list[tuple[bytes, list[ContentLine]]] = []
    current: list[ContentLine] | None = None
    current_path = b""
    pending_break = False
    kind: LineKind
    for line in lines:
        nul = line.find(b"\0")
        if nul < 0:
            if line == b"--":
                pending_break = True
                continue
            # "<path>: binary file matches (…)" for a binary file named explicitly; anything else is kept as is.
            cut = line.rfind(_BINARY)
            path, text, kind = (line[:cut], b"", "binary") if cut > 0 else (line, b"", "other")
        else:
            path, text, kind = line[:nul], line[nul + 1 :], "line"
        if current is None or path != current_path:
            current = []
            current_path = path
            blocks.append((path, current))
            starts = with_context
        else:
            starts = pending_break
        current.append(ContentLine(path, text, starts, kind))
        pending_break = False
    blocks.sort(key=lambda block: block[0])  # stable: one file's blocks keep their order
    return [record for _, block in blocks for record in block]


def parse_counts(lines: list[bytes]) -> list[tuple[bytes, int]]:
    """`path\\0count` lines as (path, count), sorted by path."""
    out: list[tuple[bytes, int]] = []
    for line in lines:
        path, _, count = line.rpartition(b"\0")
        if path and count.isdigit():
            out.append((path, int(count)))
    out.sort()
    return out
