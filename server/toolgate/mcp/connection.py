"""One configured MCP server: start it, list and pin its tools, call them, notice crashes and restart.

The SDK's transports and sessions are async context managers that must be entered and left in one task, so
each connection runs in a task of its own (inside the manager's task group) and calls reach its session from
the callers' tasks. A crashed stdio server is restarted by the next call, after a backoff that doubles with
each crash in a row. Its stderr goes to `<data>/mcp/logs/<server>.log` and to toolgate's log (server_log.py).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import mcp_types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from toolgate.core.child_env import child_environment
from toolgate.mcp.approvals import ApprovalStore
from toolgate.mcp.config import ConfiguredServer, StdioServerConfig
from toolgate.mcp.pinning import ToolSnapshot, snapshot_of
from toolgate.mcp.processes import ServerGroup, missing_command, reporting_group
from toolgate.mcp.server_log import stderr_pipe

log = logging.getLogger("toolgate.mcp")

State = Literal["stopped", "starting", "running", "changed", "crashed", "failed"]
INITIALIZE_TIMEOUT = 30.0
MAX_BACKOFF = 30.0
GROUP_TIMEOUT = 10.0  # seconds a started stdio server's shell has to say its process group (it does at once)


class ServerUnavailable(Exception):
    """The server cannot take calls now; the message says why and what to do."""


def server_environment(environ: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """toolgate's environment without its secrets (core/child_env.py, the one place that decides), plus exactly
    the variables the server's settings name."""
    return child_environment(environ, extra=extra)


class McpConnection:
    def __init__(
        self,
        server: ConfiguredServer,
        store: ApprovalStore,
        log_dir: Path,
        workspace: Path,
        *,
        environ: Mapping[str, str] | None = None,
        initialize_timeout: float = INITIALIZE_TIMEOUT,
        backoff: float = 1.0,
    ) -> None:
        self.server = server
        self.backoff = backoff
        self.store = store
        self.log_path = log_dir / f"{server.name}.log"
        self.workspace = workspace
        self.environ = dict(os.environ if environ is None else environ)
        self.initialize_timeout = initialize_timeout
        self.state: State = "stopped"
        self.last_error: str | None = None
        self.tools: list[mcp_types.Tool] = []
        self.snapshot: ToolSnapshot = {}
        self.crashes = 0
        self.pgid: int | None = None  # the stdio server's process group, once found
        self._retry_at = 0.0
        self._session: ClientSession | None = None
        self._stop = anyio.Event()
        self._stopped = anyio.Event()
        self._lost = False  # the connection closed under us (the server crashed or exited)
        self._group: anyio.abc.TaskGroup | None = None
        self._lock = anyio.Lock()
        self.on_tools_changed: list[Any] = []  # callables(connection) run after a re-listing or a crash

    # --- lifecycle -----------------------------------------------------------------------------------------
    async def start(self, group: anyio.abc.TaskGroup) -> None:
        """Start the server and wait until its tools are listed (or it failed: see `state`, `last_error`)."""
        self._group = group
        self._stop = anyio.Event()
        self._stopped = anyio.Event()
        self._lost = False
        self.state = "starting"
        ready = anyio.Event()
        group.start_soon(self._run, ready)
        await ready.wait()

    async def stop(self) -> None:
        self._stop.set()
        with anyio.move_on_after(10):
            await self._stopped.wait()

    def _transport(self, stack: AsyncExitStack, group: ServerGroup) -> Any:
        config = self.server.config
        if isinstance(config, StdioServerConfig):
            cwd = (self.workspace / config.cwd) if config.cwd else self.workspace
            env = server_environment(self.environ, config.env)
            missing = missing_command(config.command, env, cwd)
            if missing is not None:
                raise ServerUnavailable(f"{missing}; fix `command` in {self.server.source}")
            reporting = reporting_group(config.command, config.args)
            if reporting is None:
                group.unsaid()
            command, args = reporting or (config.command, config.args)
            errlog = stack.enter_context(stderr_pipe(self.server.name, self.log_path, group if reporting else None))
            params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
            return stdio_client(params, errlog=errlog)
        if config.type == "sse":
            return sse_client(config.url, headers=config.headers, timeout=config.timeout, sse_read_timeout=300)
        client = httpx2.AsyncClient(headers=config.headers, timeout=httpx2.Timeout(config.timeout, read=300))
        return streamable_http_client(config.url, http_client=client)

    async def _run(self, ready: anyio.Event) -> None:
        try:
            async with AsyncExitStack() as stack:
                group = ServerGroup()
                stack.callback(group.close)  # runs after the transport stopped the server (entered before it)
                read, write = await stack.enter_async_context(self._transport(stack, group))
                await self._watch_group(group)
                session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._on_message))
                try:
                    with anyio.fail_after(self.initialize_timeout):
                        await session.initialize()
                except TimeoutError:
                    raise ServerUnavailable(
                        f"it did not answer the MCP initialize request within {self.initialize_timeout:g} s"
                    ) from None
                self._session = session
                await self._list_tools()
                ready.set()
                self.crashes = 0
                await self._stop.wait()
            if self._lost:
                raise ServerUnavailable("the connection closed: the server process ended")
            self.state = "stopped"
        except Exception as exc:
            self.state = "failed" if not ready.is_set() else "crashed"
            self.last_error = _describe(exc)
            self.crashes += 1
            self._retry_at = time.monotonic() + min(MAX_BACKOFF, self.backoff * 2.0 ** (self.crashes - 1))
            log.warning("MCP server %s %s: %s (log: %s)", self.server.name, self.state, self.last_error, self.log_path)
        finally:
            self._session = None
            if self.state == "failed":
                self.tools = []  # a crashed server keeps its (pinned) tools: the next call restarts it
            ready.set()
            self._stopped.set()
            if self.state == "crashed":
                self._changed()  # said as it happens, not at the next call

    async def _watch_group(self, group: ServerGroup) -> None:
        """Wait for the stdio server's process group (its first stderr line: processes.py), which the watchdog
        then covers until the server is gone."""
        if not isinstance(self.server.config, StdioServerConfig):
            return
        self.pgid = await anyio.to_thread.run_sync(group.wait, GROUP_TIMEOUT)
        if self.pgid is None:
            log.info("MCP server %s: its process group was not said; the watchdog does not cover it", self.server.name)

    async def _list_tools(self) -> None:
        assert self._session is not None
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await self._session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        snapshot = snapshot_of(tools)
        pinned = await anyio.to_thread.run_sync(self.store.pin, self.server, snapshot)
        self.tools, self.snapshot = tools, snapshot
        self.state = "running" if pinned else "changed"
        if not pinned:
            self.last_error = (
                "its tools changed since you approved them, so they are hidden; see `toolgate mcp diff "
                f"{self.server.name}` and run `toolgate mcp approve {self.server.name}` if the change is fine"
            )
        self._changed()

    def _changed(self) -> None:
        for listener in self.on_tools_changed:
            listener(self)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification) and self._group is not None:
            self._group.start_soon(self._relist)
        elif isinstance(message, Exception):
            log.info("MCP server %s: %s", self.server.name, message)

    async def _relist(self) -> None:
        try:
            await self._list_tools()
        except Exception as exc:
            log.warning("MCP server %s: listing its changed tools failed: %s", self.server.name, _describe(exc))

    # --- calls ---------------------------------------------------------------------------------------------
    async def ensure_running(self) -> ClientSession:
        session = self._session
        if session is not None:
            return session  # the common case takes no lock: acquiring one costs a pass of the event loop per call
        async with self._lock:
            if self._session is None and self.state in ("crashed", "stopped") and self._group is not None:
                wait = self._retry_at - time.monotonic()
                if wait > 0:
                    raise ServerUnavailable(
                        f"MCP server {self.server.name!r} stopped ({self.last_error}); it is restarted on a call "
                        f"after {wait:.0f} s. Try again then, or do without it."
                    )
                await self.start(self._group)
            if self._session is None:
                raise ServerUnavailable(
                    f"MCP server {self.server.name!r} is not running ({self.last_error or self.state}). "
                    f"Its log is {self.log_path}."
                )
            return self._session

    async def call(self, tool: str, arguments: dict[str, Any], time_limit: float) -> mcp_types.CallToolResult:
        session = await self.ensure_running()
        try:
            with anyio.fail_after(time_limit):
                return await session.call_tool(tool, arguments)
        except TimeoutError:
            raise ServerUnavailable(
                f"{tool} on MCP server {self.server.name!r} did not answer within {time_limit:g} s and was cancelled. "
                "Retry with a smaller request, or raise the server's `timeout` setting."
            ) from None
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            if isinstance(exc, MCPError) and exc.code == mcp_types.CONNECTION_CLOSED:
                self._lost = True
                self._stop.set()
                with anyio.move_on_after(10):
                    await self._stopped.wait()
            if self._session is None or self.state == "crashed":
                raise ServerUnavailable(
                    f"MCP server {self.server.name!r} stopped during the call ({self.last_error or _describe(exc)}). "
                    "It is restarted on the next call; the call may or may not have had its effect."
                ) from None
            raise ServerUnavailable(
                f"MCP server {self.server.name!r} answered with an error: {_describe(exc)}"
            ) from None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ServerUnavailable) else f"{type(exc).__name__}: {text}"
