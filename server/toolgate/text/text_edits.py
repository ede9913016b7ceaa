"""Apply an LSP `TextEdit[]` (one file's part of a WorkspaceEdit) to a text. Pure: no I/O.

Unlike the changes of text sync (applied one after another), the edits of one file all refer to the text as it
was before any of them: they are applied from the last to the first, so that each one's positions still hold.
Overlapping edits have no meaning (LSP forbids them) and are refused rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from toolgate.text.document_sync import UTF16, Position, offset_at

_BREAK = re.compile(r"\r\n?|\n")
_FEW_EDITS = 8


class OverlappingEdits(ValueError):
    """Two edits of the same file cover the same text."""


@dataclass(frozen=True, slots=True)
class TextEdit:
    start: Position
    end: Position
    new_text: str


def apply_text_edits(text: str, edits: Sequence[TextEdit], encoding: str = UTF16) -> str:
    if len(edits) <= _FEW_EDITS:
        offsets = [(offset_at(text, e.start, encoding), offset_at(text, e.end, encoding)) for e in edits]
    else:
        # Many edits (a rename used all over a big file): the lines are found once, not once per position.
        starts = [0, *(m.end() for m in _BREAK.finditer(text))]
        offsets = [(_offset(text, starts, e.start, encoding), _offset(text, starts, e.end, encoding)) for e in edits]
    spans = sorted(
        ((start, end, e.new_text) for (start, end), e in zip(offsets, edits, strict=True)),
        key=lambda span: (span[0], span[1]),
    )
    for (_, end, _), (start, _, _) in pairwise(spans):
        if start < end:
            raise OverlappingEdits("two of the edits for this file cover the same text")
    pieces: list[str] = []
    done = 0
    for start, end, new_text in spans:
        pieces += [text[done:start], new_text]
        done = max(done, end)
    pieces.append(text[done:])
    return "".join(pieces)


def _offset(text: str, starts: list[int], position: Position, encoding: str) -> int:
    """`offset_at` with the line starts known: the position's line, then its column within that line only."""
    line = max(position.line, 0)
    if line >= len(starts):
        return len(text)
    begin = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    return begin + offset_at(text[begin:end], Position(0, position.character), encoding)
