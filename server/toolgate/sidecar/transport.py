"""Stdio framing for the sidecar: LSP base-protocol messages in, a locked writer out.

Framing must never get stuck or drop a message silently. pygls's own io loop (`pygls.io_.run_async`, read in pygls
2.1.1) does both: it matches only `Content-Length: N\r\n` exactly, skips a header block without one silently, has no
size cap, and reports unparseable JSON with a pop-up instead of an answer; so the sidecar gives each body to its
protocol's `receive` from this loop instead. This loop reads stdin on the event loop (a pipe) or on a thread of its
own (a file or a tty), resynchronises on the next `Content-Length` after anything it cannot frame (logged, and
reported to the client as a parse error), caps the size of one message, and ends cleanly at end of input.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import BinaryIO

logger = logging.getLogger("toolgate.sidecar.transport")

# Far more than any message the editor sends (it does not sync files over 50 MB to extensions) and far less than
# what parsing would cost in memory: a JSON body becomes Python objects many times its size.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
_LINE_LIMIT = 64 * 1024
_CHUNK = 1 << 16
_HEADER_NAME = b"content-length:"
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_TOKEN = re.compile(rb"[A-Za-z0-9!#$%&'*+.^_`|~-]+")


async def open_reader(stream: BinaryIO) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except (ValueError, OSError):
        # Regular files and some terminals cannot be watched by the event loop: pump them from a thread.
        threading.Thread(target=_pump, args=(stream.fileno(), reader, loop), name="toolgate-stdin", daemon=True).start()
    return reader


def _pump(fd: int, reader: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    try:
        while chunk := os.read(fd, 1 << 16):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
    except OSError as exc:
        logger.warning("reading stdin failed: %s", exc)
    finally:
        loop.call_soon_threadsafe(reader.feed_eof)


@dataclass(frozen=True)
class FramingError:
    """Input that could not be framed as a message, and was skipped up to the next `Content-Length` header."""

    reason: str


async def read_messages(
    reader: asyncio.StreamReader, max_bytes: int = MAX_MESSAGE_BYTES
) -> AsyncIterator[bytes | FramingError]:
    """Yield each message body, or a FramingError for a header block that frames none; stop at end of input.

    Framing never gets stuck: after anything it cannot read (a header block without a valid length, a header line
    over the limit, a message over the size limit, bytes that are no header at all) it resynchronises on the next
    `Content-Length:` it sees, wherever in a line that is. A length shorter than its body leaves the rest of the
    body unread; it is skipped the same way, and the next message is read."""
    framer = _Framer(reader, max_bytes)
    while True:
        try:
            item = await framer.next_item()
        except EOFError:
            return
        yield item


class _Framer:
    def __init__(self, reader: asyncio.StreamReader, max_bytes: int) -> None:
        self._reader = reader
        self._max_bytes = max_bytes
        self._buffer = bytearray()
        self._eof = False

    async def _fill(self, at_least: int = 1) -> None:
        if self._eof:
            raise EOFError
        chunk = await self._reader.read(max(_CHUNK, at_least))
        if not chunk:
            self._eof = True
            raise EOFError
        self._buffer += chunk

    async def next_item(self) -> bytes | FramingError:
        await self._skip_to_header()
        headers = await self._header_block()
        if isinstance(headers, FramingError):
            return headers
        length = headers
        if length > self._max_bytes:
            logger.error("skipping a message of %d bytes: it is over the %d-byte limit", length, self._max_bytes)
            return FramingError(f"The message of {length} bytes is over the limit of {self._max_bytes} bytes.")
        while len(self._buffer) < length:
            try:
                await self._fill(length - len(self._buffer))
            except EOFError:
                logger.warning("input ended in the middle of a message")
                raise
        # One copy out of the buffer: `bytes(self._buffer[:length])` made two, 5 ms for a 5 MB Write's message.
        with memoryview(self._buffer) as view, view[:length] as framed:
            body = bytes(framed)
        del self._buffer[:length]
        return body

    async def _skip_to_header(self) -> None:
        """Drop everything before the next `Content-Length:` (logged), wherever it starts."""
        skipped = 0
        try:
            while (found := _HEADER_START.search(self._buffer)) is None:
                # Keep a tail that may be the start of a header cut in two by the read.
                cut = len(self._buffer) - min(len(self._buffer), len(_HEADER_NAME) - 1)
                skipped += cut
                del self._buffer[:cut]
                await self._fill()
        except EOFError:
            _log_skipped(skipped + len(self._buffer))
            self._buffer.clear()
            raise
        _log_skipped(skipped + found.start())
        del self._buffer[: found.start()]

    async def _header_block(self) -> int | FramingError:
        """Read header lines up to the blank line; the body's length, or why the block frames no message."""
        length: int | None = None
        problem: str | None = None
        while True:
            end = self._buffer.find(b"\n")
            while end < 0:
                if len(self._buffer) > _LINE_LIMIT:
                    return self._broken(f"a header line is longer than {_LINE_LIMIT} bytes")
                searched = len(self._buffer)
                await self._fill()
                end = self._buffer.find(b"\n", searched)
            line = bytes(self._buffer[:end]).strip()
            del self._buffer[: end + 1]
            if len(line) > _LINE_LIMIT:  # however the reads cut it
                return self._broken(f"a header line is longer than {_LINE_LIMIT} bytes")
            if not line:
                break
            name, colon, value = line.partition(b":")
            header = name.strip().lower()
            starts_header = _HEADER_START.search(line)
            if starts_header and (header != b"content-length" or length is not None or problem is not None):
                # A header block glued to the end of one that framed nothing: start over at it.
                return self._broken(problem or "a header block has no blank line after it", restart=line)
            if header == b"content-length":
                value = value.strip()
                if value.isdigit() and len(value) <= 18:
                    length = int(value)
                else:
                    problem = f"Content-Length {_show(value)} is not a byte count"
            elif not (colon and _TOKEN.fullmatch(name)):
                problem = problem or f"{_show(line)} is not a header line"
        if problem is None and length is None:
            problem = "the header block has no Content-Length"
        if problem is not None:
            return self._broken(problem)
        assert length is not None
        return length

    def _broken(self, problem: str, restart: bytes | None = None) -> FramingError:
        logger.warning("skipping input that frames no message (%s); reading on from the next Content-Length", problem)
        if restart is not None:
            found = _HEADER_START.search(restart)
            assert found is not None
            self._buffer[:0] = restart[found.start() :] + b"\n"
        return FramingError(f"Skipped input that frames no message: {problem}.")


def _log_skipped(count: int) -> None:
    if count:
        logger.warning("ignored %d bytes of input that were not JSON-RPC message headers", count)


def _show(value: bytes) -> str:
    text = value[:40].decode("utf-8", "replace")
    return repr(text + ("…" if len(value) > 40 else ""))


class LockedWriter:
    """The writer given to pygls (`protocol.set_writer`) over a binary stream, safe to call from any thread.

    Progress may be reported from a worker thread while the event loop answers a request; without the
    lock the two messages' bytes could interleave. A broken pipe means the client is gone (its end of
    stdin closes too, which ends the session): it is logged once, and later writes are dropped.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._broken = False

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._broken:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (BrokenPipeError, ValueError) as exc:  # ValueError: the stream was closed (`exit`)
                self._broken = True
                logger.warning("cannot write to the client any more (%s)", exc)

    def close(self) -> None:
        with self._lock:
            self._broken = True
            with contextlib.suppress(OSError):
                self._stream.close()
