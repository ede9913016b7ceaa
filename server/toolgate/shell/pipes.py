"""The read end of a command's output pipe as an async stream: shared by the plain executor and the resident
sandbox, which both hand a command a pipe of their own."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import anyio

READ_SIZE = 65536


class PipeReader:
    """The read end of a command's output pipe as an async stream of chunks."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd
        os.set_blocking(fd, False)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._chunks()

    async def _chunks(self) -> AsyncIterator[bytes]:
        while self.fd is not None:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                await anyio.wait_readable(self.fd)
                continue
            if not data:
                return
            yield data

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
