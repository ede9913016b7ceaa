"""Stdio framing for the sidecar: LSP base-protocol messages in, a locked writer out.

pygls's own loop silently skips input it cannot frame and reads stdin through the same thread pool as
threaded handlers. This loop reads stdin on the event loop (a pipe) or on a thread of its own (a file or
a tty), logs whatever it has to skip, caps the size of one message, and ends cleanly at end of input.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator
from typing import BinaryIO

logger = logging.getLogger("toolgate.sidecar.transport")

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
_LINE_LIMIT = 64 * 1024


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


async def read_messages(reader: asyncio.StreamReader, max_bytes: int = MAX_MESSAGE_BYTES) -> AsyncIterator[bytes]:
    """Yield each message body; stop at end of input (or at input that cannot be resynchronised)."""
    while True:
        length: int | None = None
        skipped = 0
        while True:
            try:
                line = await reader.readline()
            except ValueError:  # a line longer than the limit: certainly not a header
                skipped += _LINE_LIMIT
                continue
            if not line:
                if skipped:
                    logger.warning("ignored %d bytes of input that were not JSON-RPC message headers", skipped)
                return
            name, colon, value = line.partition(b":")
            header = name.strip().lower()
            if not line.strip():
                if length is not None:
                    break
            elif colon and header == b"content-length" and value.strip().isdigit():
                length = int(value.strip())
            elif not (colon and header == b"content-type"):
                skipped += len(line)
        assert length is not None  # the header loop only breaks once it has a length
        if skipped:
            logger.warning("ignored %d bytes of input that were not JSON-RPC message headers", skipped)
        if length > max_bytes:
            logger.error("a message of %d bytes is over the %d-byte limit; closing the connection", length, max_bytes)
            return
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            logger.warning("input ended in the middle of a message")
            return
        yield body


class LockedWriter:
    """pygls's writer interface over a binary stream, safe to call from any thread.

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
