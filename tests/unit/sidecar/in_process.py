"""A ToolgateServer driven in-process: framed bodies in through its pygls protocol, what it writes collected."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolgate.sidecar.documents import EditorDocuments
from toolgate.sidecar.server import ToolgateServer


class Collect:
    """The writer pygls is given: checks each write is one whole framed message, and keeps its JSON."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def write(self, data: bytes) -> None:
        header, _, body = data.partition(b"\r\n\r\n")
        assert header.startswith(b"Content-Length: %d\r\n" % len(body))
        # Strict: NaN or Infinity on the wire fails the test here.
        self.messages.append(json.loads(body, parse_constant=lambda name: 1 / 0))
        self.arrived.set()

    async def next(self) -> dict[str, Any]:
        async with asyncio.timeout(5):
            while not self.messages:
                self.arrived.clear()
                await self.arrived.wait()
        return self.messages.pop(0)


def serving(server: ToolgateServer | None = None) -> tuple[ToolgateServer, Collect]:
    server = server or ToolgateServer()
    out = Collect()
    server.protocol.set_writer(out)
    return server, out


def message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


def send(server: ToolgateServer, method: str, params: Any = None, msg_id: int | str | None = None) -> None:
    fields: dict[str, Any] = {"method": method}
    if params is not None:
        fields["params"] = params
    if msg_id is not None:
        fields["id"] = msg_id
    server.protocol.receive(message(**fields))


def initialize_params(storage: Path, encodings: tuple[str, ...] = ("utf-16",), **options: Any) -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": None,
        "capabilities": {"general": {"positionEncodings": list(encodings)}},
        "clientInfo": {"name": "a client with fields we do not read"},
        "initializationOptions": {"storageDir": str(storage), **options},
    }


def text_sync(
    read_disk: Callable[[Path], bytes | None] | None = None, encodings: tuple[str, ...] = ("utf-16",)
) -> tuple[EditorDocuments, Callable[[str, Any], None]]:
    """An initialized server's document mirror, and how to send it a notification as the editor's client does
    (through pygls and the protocol's text-sync handlers)."""
    server, _out = serving()
    if read_disk is not None:
        server.documents = EditorDocuments(read_disk)
    send(server, "initialize", initialize_params(Path("/nonexistent/storage"), encodings), msg_id="initialize")
    return server.documents, lambda method, params: send(server, method, params)
