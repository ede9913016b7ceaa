"""The beginning and end of a long text, cut at line breaks where possible, with line numbers for both."""

from __future__ import annotations

from dataclasses import dataclass


def count_lines(text: str) -> int:
    """Lines as `split_lines` counts them: a final newline ends the last line, it does not start one."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(frozen=True, slots=True)
class Preview:
    head: str
    head_last_line: int  # the line the head ends in (1-based)
    tail: str  # empty when the head reaches the end, or the text is not long enough to need one
    tail_first_line: int  # the line the tail starts in
    omitted_chars: int  # characters between head and tail
    head_ends_mid_line: bool
    tail_starts_mid_line: bool
    total_chars: int
    total_lines: int


def head_and_tail(text: str, head_chars: int, tail_chars: int) -> Preview:
    """At most `head_chars` from the start and `tail_chars` from the end, never overlapping.

    Cuts fall on line breaks when one is near (within the second half of the budget); otherwise the cut is
    mid-line (one enormous line still gets a preview).
    """
    total_lines = count_lines(text)
    if len(text) <= head_chars + tail_chars:
        return Preview(text, total_lines, "", total_lines, 0, False, False, len(text), total_lines)

    head_end = head_chars
    newline = text.rfind("\n", 0, head_chars + 1)
    if newline >= head_chars // 2:
        head_end = newline  # the head ends before the break
    tail_start = len(text) - tail_chars
    newline = text.find("\n", tail_start - 1, len(text) - tail_chars // 2)
    if newline != -1 and newline + 1 < len(text):
        tail_start = newline + 1
    tail_start = max(tail_start, head_end)
    head = text[:head_end]
    tail = text[tail_start:] if tail_chars > 0 else ""
    if not tail:
        tail_start = len(text)
    return Preview(
        head=head,
        head_last_line=head.count("\n") + 1,
        tail=tail,
        tail_first_line=text.count("\n", 0, tail_start) + 1,
        omitted_chars=tail_start - head_end,
        head_ends_mid_line=text[head_end] != "\n",
        tail_starts_mid_line=bool(tail) and text[tail_start - 1] != "\n",
        total_chars=len(text),
        total_lines=total_lines,
    )
