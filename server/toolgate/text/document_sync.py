"""LSP text document sync: apply `TextDocumentContentChangeEvent`s to a document's text.

A change replaces the whole text (no range) or the text between two positions. A position is a line and a
`character` counted in code units of the position encoding the server and client agreed on at `initialize`:
UTF-16 by default (and the only one VS Code uses), UTF-8 or UTF-32 if the client offers them.
Line breaks are `\\n`, `\\r\\n` and `\\r` (the LSP spec); nothing else (`str.splitlines` would also split on
`\\v`, `\\f`, U+0085, U+2028, …, which LSP does not).

Any input gives a valid `str` and nothing raises. Out-of-range input is resolved like this (the LSP spec
covers the first rule; the others follow Microsoft's `vscode-languageserver-textdocument`, the reference
implementation every VS Code language server uses, except the surrogate rule, which it does not handle):

- a `character` past the end of its line → the end of the line (before its line break);
- a `line` past the last line → the end of the document;
- a negative `line` or `character` (LSP says uinteger) → 0;
- a `character` that falls inside a character's code units (between the two UTF-16 halves of an astral
  character such as an emoji, or inside a UTF-8 sequence) → after that character: a Python `str` cannot hold
  half of one, and never splitting it keeps the text valid;
- there is no position inside a `\\r\\n`: it is one line break, so a line's `character`s stop before it;
- a range whose start is after its end → the range between them (start and end swapped).

Fast for the common case, a keystroke in a big buffer: the text is never split into lines. The start of the
change's line is found by counting line breaks in large chunks (`str.count` runs in C), and only the last
chunk is walked break by break; the end is found from the start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Position:
    line: int
    character: int  # UTF-16 code units from the start of the line


@dataclass(frozen=True, slots=True)
class Range:
    start: Position
    end: Position


@dataclass(frozen=True, slots=True)
class Change:
    """A `TextDocumentContentChangeEvent`: `range` None replaces the whole text."""

    text: str
    range: Range | None = None


_BREAK = re.compile(r"\r\n?|\n")
_LONE_CR = re.compile(r"\r(?!\n)")
# Line breaks are counted this many characters at a time. Large enough that a 5 MB buffer takes a few hundred
# `str.count` calls, small enough that walking the last chunk break by break costs little.
_CHUNK = 1 << 14


@dataclass(frozen=True, slots=True)
class _Encoding:
    """How LSP counts a `character`: `units` of a slice of text, at most `widest` units per code point."""

    codec: str | None  # None: one unit per code point
    widest: int

    def units(self, text: str) -> int:
        if self.codec is None or text.isascii():
            return len(text)
        # surrogatepass: a lone surrogate (JSON can carry one) is one code point, and must not raise.
        return len(text.encode(self.codec, "surrogatepass")) // (2 if self.codec == "utf-16-le" else 1)


# LSP's PositionEncodingKind values.
ENCODINGS = {"utf-16": _Encoding("utf-16-le", 2), "utf-8": _Encoding("utf-8", 4), "utf-32": _Encoding(None, 1)}
UTF16 = "utf-16"


def apply_changes(text: str, changes: Iterable[Change], encoding: str = UTF16) -> str:
    """The text after `changes`, applied in order (each one's positions refer to the text the previous one left).
    `encoding` is a key of ENCODINGS; anything else counts as UTF-16, LSP's default."""
    units = ENCODINGS.get(encoding, ENCODINGS[UTF16])
    for change in changes:
        text = _apply(text, change, units)
    return text


def apply_change(text: str, change: Change, encoding: str = UTF16) -> str:
    return apply_changes(text, (change,), encoding)


def _apply(text: str, change: Change, units: _Encoding) -> str:
    if change.range is None:
        return change.text
    start, end = _clamped(change.range.start), _clamped(change.range.end)
    if (end.line, end.character) < (start.line, start.character):
        start, end = end, start
    line_start = _line_start(text, 0, start.line)
    begin = _offset_from(text, line_start, 0, start.character, units)
    # The end is found from the start's line on, not from the top again.
    stop = _offset_from(text, line_start, end.line - start.line, end.character, units)
    if stop < begin:  # cannot happen (offsets grow with positions); kept so that no input can duplicate text
        begin, stop = stop, begin
    # One join copies the buffer once more; `a + b + c` would copy everything before the edit twice.
    return "".join((text[:begin], change.text, text[stop:]))


def offset_at(text: str, position: Position, encoding: str = UTF16) -> int:
    """The index into `text` (in code points) of an LSP position, resolved as the module docstring says."""
    position = _clamped(position)
    return _offset_from(text, 0, position.line, position.character, ENCODINGS.get(encoding, ENCODINGS[UTF16]))


def _clamped(position: Position) -> Position:
    if position.line >= 0 and position.character >= 0:
        return position
    return Position(max(position.line, 0), max(position.character, 0))


def _offset_from(text: str, line_start: int | None, lines: int, character: int, units: _Encoding) -> int:
    """The offset `lines` lines below the line starting at `line_start`, `character` code units into it."""
    if line_start is None:
        return len(text)
    start = _line_start(text, line_start, lines)
    if start is None:
        return len(text)
    return _column(text, start, _line_end(text, start), character, units)


def _count_breaks(text: str, begin: int, end: int) -> int:
    count = text.count("\n", begin, end)
    # Most text has no carriage return (find is a memchr), and the rest has them before a \n; only a lone \r,
    # a break of its own, needs the slow count of \r\n (a chunk never ends between the two: see _line_start).
    if text.find("\r", begin, end) == -1 or _LONE_CR.search(text, begin, end) is None:
        return count
    return count + text.count("\r", begin, end) - text.count("\r\n", begin, end)


def _line_start(text: str, start: int | None, lines: int) -> int | None:
    """The start of the line `lines` line breaks after `start` (itself a line start); None: there is none."""
    if start is None:
        return None
    size = len(text)
    while lines > 0:
        end = min(start + _CHUNK, size)
        if text.startswith("\r\n", end - 1):
            end += 1  # a \r\n is one break: never count its halves in two chunks
        breaks = _count_breaks(text, start, end)
        if breaks >= lines:
            break  # the line starts in this chunk
        if end >= size:
            return None
        lines -= breaks
        start = end
    while lines > 0:
        found = _BREAK.search(text, start)
        if found is None:
            return None
        start = found.end()
        lines -= 1
    return start


def _line_end(text: str, start: int) -> int:
    """Where the line starting at `start` ends: before its line break, or at the end of the text."""
    end = text.find("\n", start)
    if end == -1:
        end = len(text)
    carriage_return = text.find("\r", start, end)  # bounded: never scans past the line
    return end if carriage_return == -1 else carriage_return


def _column(text: str, start: int, end: int, character: int, units: _Encoding) -> int:
    """The offset `character` code units into text[start:end] (a line), clamped to `end`.

    Takes as many code points as there are units left; when those hold wider characters and overshoot, it takes
    as many as surely fit (units left / the widest a code point can be), and one at a time when that is none: a
    few slices whatever the line's length, never a loop over its characters.
    """
    offset = start
    left = character
    while left > 0 and offset < end:
        take = min(left, end - offset)
        counted = units.units(text[offset : offset + take])
        if counted <= left:
            offset += take
            left -= counted
            continue
        # Within the line (the overshooting slice was longer); one code point may overshoot what is left: the
        # position then falls inside it, and resolves to after it.
        fit = max(left // units.widest, 1)
        left -= units.units(text[offset : offset + fit])
        offset += fit
    return offset
