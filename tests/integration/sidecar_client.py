"""A pytest-lsp client for a real sidecar subprocess over stdio.

The client keeps params and results as plain JSON (the same converter as the server), answers the
server's approval and diff-review requests through handlers each test sets, and collects the server's
stderr so tests can wait for log lines. Every server runs in its own process group, which teardown kills.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.client import LanguageClient as PyglsLanguageClient
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)
from pytest_lsp import LanguageClient
from pytest_lsp.client import register_lsp_features

from toolgate.sidecar import protocol as p

HERE = Path(__file__).parent
TEST_SERVER = [sys.executable, str(HERE / "sidecar_server.py")]
REAL_SERVER = [sys.executable, "-m", "toolgate", "serve", "--trust-workspace"]  # as the extension starts it
DEADLINE = 20.0

Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


_ids = itertools.count(1)


def _raw_fields(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**{field.name: obj.get(field.name) for field in attrs.fields(cls)})


def wire_converter() -> cattrs.Converter:
    """pygls's converter, except that params and results of methods it does not know stay plain JSON (by default
    pygls turns them into namedtuples; the tests compare them with the protocol's JSON)."""
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _raw_fields)
    return converter


def use(name: str, **tool_input: Any) -> dict[str, Any]:
    """A tool_use block with a fresh id."""
    return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": tool_input}


async def _refuse(params: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError(f"the test did not expect a request from the server: {params}")


class SidecarClient(LanguageClient):
    def __init__(self) -> None:
        super().__init__(converter_factory=wire_converter)
        register_lsp_features(self)
        self.stderr_lines: list[str] = []
        self.approvals: list[dict[str, Any]] = []
        self.reviews: list[dict[str, Any]] = []
        self.progress_events: list[dict[str, Any]] = []
        self.chat_events: list[dict[str, Any]] = []
        self.stand_ins: list[list[str]] = []  # every `toolgate/sandbox/standIns` list, in order
        self.answer_approval: Answer = _refuse
        self.answer_review: Answer = _refuse
        self._changed = asyncio.Event()  # set whenever anything the tests wait for arrives

        @self.feature(p.APPROVAL_REQUEST)
        async def approval(params: dict[str, Any]) -> dict[str, Any]:
            self.approvals.append(params)
            self._changed.set()
            return await self.answer_approval(params)

        @self.feature(p.DIFF_REVIEW)
        async def review(params: dict[str, Any]) -> dict[str, Any]:
            self.reviews.append(params)
            self._changed.set()
            return await self.answer_review(params)

        @self.feature(p.TOOLS_PROGRESS)
        def progress(params: dict[str, Any]) -> None:
            self.progress_events.append(params)
            self._changed.set()

        @self.feature(p.CHAT_EVENT)
        def chat_event(params: dict[str, Any]) -> None:
            self.chat_events.append(params)
            self._changed.set()

        @self.feature(p.SANDBOX_STAND_INS)
        def stand_ins(params: dict[str, Any]) -> None:
            self.stand_ins.append(list(params["paths"]))
            self._changed.set()

    def report_server_error(self, error: Exception, source: Any) -> None:
        # A handler of ours that raises is answered to the server as an error response, which some tests
        # do on purpose; pytest-lsp would also fail the test for it.
        if source is not FeatureRequestError:
            super().report_server_error(error, source)

    async def start_io(self, cmd: str, *args: Any, **kwargs: Any) -> None:
        # pytest-lsp's own start_io forwards stderr; we keep the lines as well.
        await PyglsLanguageClient.start_io(self, cmd, *args, **kwargs)
        self._stderr_forwarder = asyncio.create_task(self._collect_stderr())

    async def _collect_stderr(self) -> None:
        assert self._server is not None and self._server.stderr is not None
        while line := await self._server.stderr.readline():
            sys.stderr.write(line.decode(errors="replace"))
            self.stderr_lines.append(line.decode(errors="replace"))
            self._changed.set()

    async def wait_for(self, condition: Callable[[], object]) -> None:
        """Until `condition()` holds, re-checked whenever a request, notification or log line arrives."""
        async with asyncio.timeout(DEADLINE):
            while not condition():
                self._changed.clear()
                await self._changed.wait()

    async def wait_for_log(self, text: str) -> None:
        await self.wait_for(lambda: any(text in line for line in self.stderr_lines))

    async def call(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        # pygls's own send: pytest-lsp's wrapper checks LSP capabilities (meaningless for toolgate methods)
        # and refuses to send anything before initialize, which one test needs to do.
        async with asyncio.timeout(DEADLINE):
            return await JsonRPCProtocol.send_request_async(self.protocol, method, params, **kwargs)

    async def raw_request(self, message: dict[str, Any]) -> Any:
        """Send a request exactly as given (even one pygls would refuse to build) and await its answer."""
        assert self._server is not None and self._server.stdin is not None
        answer: Future[Any] = Future()
        self.protocol._request_futures[message["id"]] = answer
        body = json.dumps(message).encode()
        self._server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        async with asyncio.timeout(DEADLINE):
            return await asyncio.wrap_future(answer)

    async def new_session(self, workspace: Path, **params: Any) -> str:
        info = await self.call(p.SESSION_NEW, {"workspace": str(workspace), **params})
        return str(info["sessionId"])

    async def run(self, session_id: str, *calls: dict[str, Any]) -> list[dict[str, Any]]:
        result = await self.call(p.TOOLS_RUN, {"sessionId": session_id, "calls": list(calls)})
        return list(result["results"])

    @property
    def pid(self) -> int:
        assert self._server is not None
        return self._server.pid

    async def exited(self) -> int:
        assert self._server is not None
        async with asyncio.timeout(DEADLINE):
            return await self._server.wait()


async def start_client(command: list[str], env: dict[str, str] | None = None) -> SidecarClient:
    client = SidecarClient()
    await client.start_io(*command, start_new_session=True, env={**os.environ, **(env or {})})
    return client


async def initialize(client: SidecarClient, storage: Path, workspace: Path | None = None) -> types.InitializeResult:
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        initialization_options={"storageDir": str(storage)},
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")] if workspace else None,
    )
    async with asyncio.timeout(DEADLINE):
        return await client.initialize_session(params)


async def stop_client(client: SidecarClient) -> None:
    """Polite shutdown when possible; the process group is killed in any case."""
    if client._server is not None and client._server.returncode is None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5):
                await client.shutdown_session()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(client.pid, signal.SIGKILL)
    async with asyncio.timeout(DEADLINE):
        await client.stop()
