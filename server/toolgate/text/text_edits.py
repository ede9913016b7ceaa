"""Apply an LSP `TextEdit[]` (one file's part of a WorkspaceEdit) to a text. Pure: no I/O.

Unlike the changes of text sync (applied one after another), the edits of one file all refer to the text as it
was before any of them: they are applied from the last to the first, so that each one's positions still hold.
Overlapping edits have no meaning (LSP forbids them) and are refused rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from toolgate.text.document_sync import UTF16, Position, offset_at


class OverlappingEdits(ValueError):
    """Two edits of the same file cover the same text."""


@dataclass(frozen=True, slots=True)
class TextEdit:
    start: Position
    end: Position
    new_text: str


def apply_text_edits(text: str, edits: Sequence[TextEdit], encoding: str = UTF16) -> str:
    spans = sorted(
        ((offset_at(text, e.start, encoding), offset_at(text, e.end, encoding), e.new_text) for e in edits),
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
