"""All of a session's MCP servers: which may start, starting them, and the tools the model is shown.

A server starts only when (1) it is a user server, or a workspace server in a trusted workspace, and (2) the
person approved its current settings. Its tools are shown only while its tool list matches the pin. Tools a
deny rule covers as a whole (`mcp__server`, `mcp__server__tool`) are left out of the list altogether.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import anyio

from toolgate.mcp.approvals import ApprovalError, ApprovalStore
from toolgate.mcp.config import ConfiguredServer, ServerList, configured_servers
from toolgate.mcp.connection import INITIALIZE_TIMEOUT, McpConnection
from toolgate.mcp.names import tool_names
from toolgate.mcp.tool import McpTool
from toolgate.permissions.decide import PermissionEngine
from toolgate.session_files import default_data_root


@dataclass(frozen=True, slots=True)
class ServerStatus:
    name: str
    scope: str
    state: str  # blocked-untrusted | needs-approval | stopped | starting | running | changed | crashed | failed
    reason: str
    tools: list[str]
    log: Path | None


def mcp_dir(data_dir: Path | None) -> Path:
    return (data_dir or default_data_root()) / "mcp"


class McpManager:
    def __init__(
        self,
        workspace: Path,
        *,
        data_dir: Path | None = None,
        approvals_root: Path | None = None,
        home: Path | None = None,
        environ: Mapping[str, str] | None = None,
        trust_workspace: bool | None = None,
        initialize_timeout: float = INITIALIZE_TIMEOUT,
        backoff: float = 1.0,
    ) -> None:
        self.workspace = workspace
        self.environ = dict(os.environ if environ is None else environ)
        self.home = home or Path.home()
        self.directory = mcp_dir(data_dir)  # the servers' logs (and, without `approvals_root`, the approvals)
        self.store = ApprovalStore(self.directory if approvals_root is None else mcp_dir(approvals_root))
        if approvals_root is not None:
            # Approvals kept next to the logs before the store was shared (approvals.py) join it, once.
            self.store.adopt(ApprovalStore(self.directory))
        self.trust_workspace = trust_workspace
        self.listing: ServerList = configured_servers(workspace, self.home, self.environ, trust_workspace)
        self.initialize_timeout = initialize_timeout
        self.backoff = backoff  # seconds before the first restart of a crashed server; doubles per crash
        self.connections: dict[str, McpConnection] = {}
        self._blocked: dict[str, tuple[str, str]] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self.on_tools_changed: list[Callable[[], None]] = []  # run when a server's usable tools may differ

    async def __aenter__(self) -> McpManager:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for connection in self.connections.values():
            connection._stop.set()
        assert self._group is not None
        await self._group.__aexit__(kind, exc, tb)

    def blocked(self, name: str) -> tuple[str, str] | None:
        """(state, why) of a server this manager did not start, if it tried."""
        return self._blocked.get(name)

    def server(self, name: str) -> ConfiguredServer | None:
        return next((s for s in self.listing.servers if s.name == name), None)

    def may_start(self, server: ConfiguredServer) -> tuple[bool, str, str]:
        """(may it start, state if not, why not)."""
        if server.scope == "workspace" and not self.listing.workspace_trusted:
            return (
                False,
                "blocked-untrusted",
                f"it comes from {server.source}, and this workspace is not trusted; run `toolgate trust "
                f"{self.workspace}` if you trust it, then `toolgate mcp approve {server.name}`",
            )
        try:
            approval = self.store.get(server)
        except ApprovalError as exc:
            return False, "needs-approval", str(exc)
        if approval is None:
            return (
                False,
                "needs-approval",
                f"it has not been approved with its current settings; run `toolgate mcp approve {server.name}`",
            )
        return True, "", ""

    async def start(self) -> None:
        """Start every server that may start, one after another (a slow one delays only the start)."""
        assert self._group is not None, "use the manager as `async with McpManager(...)`"
        for server in self.listing.servers:
            await self._start_one(server)

    async def _start_one(self, server: ConfiguredServer) -> None:
        assert self._group is not None, "use the manager as `async with McpManager(...)`"
        allowed, state, reason = self.may_start(server)
        if not allowed:
            self._blocked[server.name] = (state, reason)
            return
        self._blocked.pop(server.name, None)
        connection = McpConnection(
            server,
            self.store,
            self.directory / "logs",
            self.workspace,
            environ=self.environ,
            initialize_timeout=self.initialize_timeout,
            backoff=self.backoff,
        )
        self.connections[server.name] = connection
        connection.on_tools_changed.append(self._tools_changed)
        await connection.start(self._group)

    async def restart(self, name: str) -> ConfiguredServer:
        """Stop the server if it runs, read the settings again, and start it if it may start now (a server that
        failed, was approved since, or whose tools changed and were re-approved). KeyError: no such server."""
        await self.stop_server(name)
        self.listing = configured_servers(self.workspace, self.home, self.environ, self.trust_workspace)
        server = self.server(name)
        if server is None:
            raise KeyError(name)
        await self._start_one(server)
        self._tools_changed(None)
        return server

    async def stop_server(self, name: str) -> None:
        """Stop one server (its process group dies) and forget its connection; its tools go with it."""
        connection = self.connections.pop(name, None)
        if connection is not None:
            await connection.stop()
            self._tools_changed(None)

    def _tools_changed(self, _connection: McpConnection | None) -> None:
        for listener in self.on_tools_changed:
            listener()

    def tools(self, denied: Callable[[str], bool] = lambda _name: False) -> list[McpTool]:
        """The tools to register: running servers with their pin intact, minus what `denied` names."""
        tools: list[McpTool] = []
        for connection in self.connections.values():
            if connection.state not in ("running", "crashed"):
                continue
            names = tool_names(connection.server.name, [t.name for t in connection.tools])
            for spec in connection.tools:
                name = names[spec.name]
                if not denied(name):
                    tools.append(McpTool(connection, spec, name))
        return sorted(tools, key=lambda t: t.name)

    def status(self) -> list[ServerStatus]:
        statuses = []
        for server in self.listing.servers:
            connection = self.connections.get(server.name)
            if connection is None:
                state, reason = self._blocked.get(server.name) or ("stopped", "not started")
                statuses.append(ServerStatus(server.name, server.scope, state, reason, [], None))
                continue
            names = tool_names(server.name, [t.name for t in connection.tools])
            statuses.append(
                ServerStatus(
                    server.name,
                    server.scope,
                    connection.state,
                    connection.last_error or "",
                    sorted(names.values()),
                    connection.log_path,
                )
            )
        return statuses


def denied_by_rules(engine: PermissionEngine) -> Callable[[str], bool]:
    """Whether a deny rule covers a tool as a whole (`mcp__server`, `mcp__server__tool`): such a tool is left out
    of the model's list, not merely refused when called."""

    def denied(name: str) -> bool:
        return any(e.rule.tool_wide and e.rule.covers_tool(name) for e in engine.book.of("deny"))

    return denied
