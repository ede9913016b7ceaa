"""How many prompts a transcript holds, kept in one short line beside it, so that the History's first listing
reads a few bytes per session instead of parsing every transcript.

The line says "the transcript of this size and this modification time holds this many prompts". It is only
a shortcut: a line that does not name the transcript as it is now (the transcript was appended to without it,
cut back by a rewind, damaged, written by an older version, or the index itself is torn or missing) is
ignored, and the count comes from parsing the transcript, which then writes the line again. The transcript's
writer keeps it up to date on each append while it knows the count (it found a valid line, or an empty file).

The line is written in place (no rename, no truncation, always the same length), so that the writer's and a
reader's writes land in the one file; it is never synced (losing it costs one parse), and carries a checksum,
so a torn one is ignored too.
"""

from __future__ import annotations

import contextlib
import os
import re
import zlib
from pathlib import Path

from toolgate.agent.conversation import ChatMessage
from toolgate.core.messages import TextBlock

_LINE = re.compile(rb"((\d{20}) (\d{20}) (\d{10})) (\d{10})\n")  # size, time, prompts, and their CRC-32
_EXAMPLE = b"%020d %020d %010d %010d\n" % (0, 0, 0, 0)  # every line is this long


def is_prompt(message: ChatMessage) -> bool:
    """A prompt: a user message with text (not only tool results), as the chat shows one."""
    return message.role == "user" and any(isinstance(b, TextBlock) for b in message.content)


def index_path(transcript: Path) -> Path:
    return transcript.with_name(transcript.name + ".prompts")


def read_count(transcript: Path, size: int, mtime_ns: int) -> int | None:
    """The prompt count the index gives for the transcript at this size and time; None when it gives none."""
    try:
        with open(index_path(transcript), "rb") as handle:
            found = _LINE.match(handle.read(len(_EXAMPLE)))
    except OSError:
        return None
    if found is None or zlib.crc32(found[1]) != int(found[5]) or (int(found[2]), int(found[3])) != (size, mtime_ns):
        return None  # none, torn, or about another version of the transcript
    return int(found[4])


def open_index(transcript: Path) -> int | None:
    """The index opened for writing (None: it cannot be), for a writer that records a count on every append."""
    try:
        return os.open(index_path(transcript), os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        return None


def record_count(fd: int, size: int, mtime_ns: int, prompts: int) -> None:
    """Record the count for the transcript at this size and time (a failure only costs a later parse)."""
    fields = f"{size:020d} {mtime_ns:020d} {prompts:010d}".encode()
    with contextlib.suppress(OSError):  # over the line before, of the same length: no truncation (on ext4 a
        os.pwrite(fd, fields + b" %010d\n" % zlib.crc32(fields), 0)  # truncated file is flushed on close)


def write_count(transcript: Path, size: int, mtime_ns: int, prompts: int) -> None:
    """`record_count` for a reader that had to count."""
    fd = open_index(transcript)
    if fd is not None:
        record_count(fd, size, mtime_ns, prompts)
        os.close(fd)
