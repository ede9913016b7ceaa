"""Collecting a command's output: all of it while it is small, head and tail once it is not.

Bytes are decoded incrementally as UTF-8 (a character split across two reads is kept whole); bytes that
are not UTF-8 are shown as `\\xNN` and NUL as `\\x00`, so binary output is visible and nothing is silently
dropped. Past the inline limit the first and last parts stay in memory and everything goes to a spill
stream (the session's output store), up to a cap that is announced when reached.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

INLINE_LIMIT = 30_000  # characters shown inline in a tool result
HEAD_CHARS = 14_000  # shown from the start when the output is over the limit
TAIL_CHARS = 14_000  # shown from the end
SPILL_CAP_CHARS = 64 * 1024 * 1024  # the stored copy stops here


@dataclass(frozen=True, slots=True)
class Captured:
    """What a finished (or interrupted) command printed, ready to show."""

    text: str  # everything, or head + marker + tail
    total_chars: int
    omitted_chars: int  # characters left out of `text` (0: it is complete)
    stored_ref: str | None  # where the full output is kept, when it is not all shown
    stored_chars: int  # how much of it the stored copy holds
    binary: bool  # NUL bytes or bytes that are not UTF-8 were shown as escapes

    @property
    def complete(self) -> bool:
        return self.omitted_chars == 0


class OutputCapture:
    def __init__(
        self,
        open_spill: Callable[[], tuple[str, TextIO]] | None = None,
        *,
        limit: int = INLINE_LIMIT,
        head: int = HEAD_CHARS,
        tail: int = TAIL_CHARS,
        spill_cap: int = SPILL_CAP_CHARS,
    ) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
        self._open_spill = open_spill
        self.limit, self.head_chars, self.tail_chars, self.spill_cap = limit, head, tail, spill_cap
        self._small: list[str] = []  # everything, while under the limit
        self._head = ""
        self._tail: list[str] = []
        self._tail_len = 0
        self.total = 0
        self.binary = False
        self._spilling = False
        self._spill: TextIO | None = None
        self.spill_ref: str | None = None
        self.spilled = 0

    def feed(self, data: bytes) -> str:
        """Add raw output; returns the newly decoded text (for live progress)."""
        text = self._decoder.decode(data)
        return self._add(text)

    def finish(self) -> str:
        """Flush a trailing partial character (shown as escapes)."""
        return self._add(self._decoder.decode(b"", final=True))

    def _add(self, text: str) -> str:
        if not text:
            return text
        if "\x00" in text:
            text = text.replace("\x00", "\\x00")
            self.binary = True
        elif "\\x" in text and not self.binary and _has_escaped_byte(text):
            self.binary = True
        self.total += len(text)
        if not self._spilling:
            self._small.append(text)
            if self.total > self.limit:
                self._start_spilling()
            return text
        self._write_spill(text)
        self._tail.append(text)
        self._tail_len += len(text)
        if self._tail_len > 4 * self.tail_chars:
            self._trim_tail()
        return text

    def _start_spilling(self) -> None:
        everything = "".join(self._small)
        self._small = []
        self._spilling = True
        self._head = everything[: self.head_chars]
        self._tail = [everything[self.head_chars :]]
        self._tail_len = len(self._tail[0])
        if self._open_spill is not None:
            self.spill_ref, self._spill = self._open_spill()
        self._write_spill(everything)
        self._trim_tail()

    def _write_spill(self, text: str) -> None:
        if self._spill is None or self.spilled >= self.spill_cap:
            return
        part = text[: self.spill_cap - self.spilled]
        self._spill.write(part)
        self.spilled += len(part)

    def _trim_tail(self) -> None:
        joined = "".join(self._tail)
        self._tail = [joined[-self.tail_chars :]]
        self._tail_len = len(self._tail[0])

    def close_spill(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def result(self) -> Captured:
        self.close_spill()
        if not self._spilling:
            return Captured("".join(self._small), self.total, 0, None, 0, self.binary)
        tail = "".join(self._tail)[-self.tail_chars :]
        omitted = self.total - len(self._head) - len(tail)
        if omitted <= 0:  # head and tail meet: nothing was left out after all
            return Captured(self._head + tail, self.total, 0, self.spill_ref, self.spilled, self.binary)
        marker = "\n\n" + omission_notice(omitted, self.total, self.spill_ref, self.spilled) + "\n\n"
        return Captured(self._head + marker + tail, self.total, omitted, self.spill_ref, self.spilled, self.binary)


def _has_escaped_byte(text: str) -> bool:
    # backslashreplace writes undecodable bytes as \x80-\xff; a literal "\x4" in normal text is not one.
    index = text.find("\\x")
    while index >= 0:
        code = text[index + 2 : index + 4]
        if len(code) == 2 and code[0] in "89abcdef" and code[1] in "0123456789abcdef":
            return True
        index = text.find("\\x", index + 2)
    return False


def _size(chars: int) -> str:
    if chars < 1024 * 1024:
        return f"{chars:,} characters"
    return f"{chars / 1024 / 1024:.1f} M characters"


def omission_notice(omitted: int, total: int, ref: str | None, stored: int) -> str:
    where = ""
    if ref is not None:
        where = f" The full output is stored as {ref}"
        if stored < total:
            where += f" (its first {_size(stored)}; the rest was not kept)"
        where += "."
    return f"[… {_size(omitted)} omitted here, out of {_size(total)} in all.{where}]"
