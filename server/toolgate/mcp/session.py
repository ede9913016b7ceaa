"""A chat session's MCP servers (`toolgate chat`, the editor's sessions): started lazily, stopped with the session.

Nothing starts when the session opens: the servers start before its first model request (`ensure_started`,
called by the agent loop as a turn begins), so opening a session, listing sessions or drawing a history
spawns no process and imports no MCP SDK. A session whose settings name no server never imports it at all.

A session spans many requests, each answered in a task of its own, while the SDK's transports must be entered
and left in one task: the manager therefore lives in a host task of its own, from the first start until the
session closes (`aclose`, run when the session's dependencies close), which stops every server and so kills
their process groups.

The tools the model sees follow the manager (`sync_tools`): after a start, a restart, an approval or a
`tools/list_changed`, the registry holds exactly the usable MCP tools, after the built-ins.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from toolgate.core.deps import Dep

if TYPE_CHECKING:
    from toolgate.core.registry import ToolRegistry
    from toolgate.core.tool_session import ToolSession
    from toolgate.mcp.config import ConfiguredServer
    from toolgate.mcp.manager import McpManager
    from toolgate.mcp.report import ServerReport
    from toolgate.permissions.decide import PermissionEngine

log = logging.getLogger("toolgate.mcp")

# How long a closing session waits for its servers to stop (the SDK escalates to SIGKILL well within it).
STOP_GRACE_SECONDS = 15.0


class UnknownServer(LookupError):
    """A request names a server the session does not have; the message says which it has."""


@dataclass(frozen=True, slots=True)
class McpOptions:
    """Where a session's MCP servers come from. `data_dir`: the data root whose `mcp/` holds the approvals and
    logs (None: the default root). `approvals_root`: another data root whose `mcp/` holds the approvals instead
    (the editor's sessions live in its storage directory, while their approvals are the CLI's: approvals.py).
    `trust_workspace` None: as the user settings' trustedWorkspaces say."""

    data_dir: Path | None = None
    approvals_root: Path | None = None
    trust_workspace: bool | None = None
    home: Path | None = None
    environ: Mapping[str, str] | None = None


class SessionMcp:
    def __init__(
        self, workspace: Path, registry: ToolRegistry, engine: PermissionEngine | None, options: McpOptions
    ) -> None:
        self.workspace = workspace
        self.registry = registry
        self.engine = engine
        self.options = options
        self.manager: McpManager | None = None
        self.closed = False
        self._host: asyncio.Task[None] | None = None
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._lock = anyio.Lock()
        self._registered: set[str] = set()
        # Told when a server's state or tools changed while the session runs (a `tools/list_changed` mid-turn,
        # a crash, a restart): the editor's MCP view and approval card hear it then, not after the turn.
        self.on_change: Callable[[], None] | None = None

    def make_manager(self) -> McpManager:
        from toolgate.mcp.manager import McpManager

        o = self.options
        return McpManager(
            self.workspace,
            data_dir=o.data_dir,
            approvals_root=o.approvals_root,
            home=o.home,
            environ=o.environ,
            trust_workspace=o.trust_workspace,
        )

    async def ensure_started(self) -> None:
        """Start the servers that may start (once per session) and offer their tools. Never raises: a server
        that fails is reported in its status, and the session goes on without it."""
        async with self._lock:
            if self._host is not None or self.closed:
                return
            if not _any_configured(self.workspace, self.options):
                return  # not even the SDK is imported
            manager = self.make_manager()
            self.manager = manager
            # The host outlives the request that starts it (see the module docstring), so it is not a child of
            # the caller's task group.
            self._host = asyncio.get_running_loop().create_task(self._run(manager))
            await self._ready.wait()
            self.sync_tools()
            for status in manager.status():
                if status.state in ("needs-approval", "blocked-untrusted"):  # said once, where the person looks
                    log.warning("MCP server %r is %s: %s", status.name, status.state, status.reason)

    async def _run(self, manager: McpManager) -> None:
        try:
            async with manager:
                manager.on_tools_changed.append(self._on_tools_changed)
                await manager.start()
                self._ready.set()
                await self._stop.wait()
        except Exception:
            log.exception("the MCP servers of %s stopped unexpectedly", self.workspace)
        finally:
            self._ready.set()

    def _on_tools_changed(self) -> None:
        if not self._ready.is_set():
            return  # the first start: ensure_started offers the tools, and its caller reports
        self.sync_tools()
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # telling the editor must never break the server's connection
                log.exception("telling the editor that the MCP servers of %s changed failed", self.workspace)

    def sync_tools(self) -> list[str]:
        """Make the registry's MCP tools exactly the manager's usable ones; their names."""
        from toolgate.mcp.manager import denied_by_rules

        if self.manager is None:
            return []
        denied = denied_by_rules(self.engine) if self.engine is not None else (lambda _name: False)
        tools = self.manager.tools(denied)
        for name in self._registered:
            self.registry.remove(name)
        self._registered = set()
        for tool in tools:
            if self.registry.get(tool.name) is None:
                self.registry.add(tool)
                self._registered.add(tool.name)
        return sorted(self._registered)

    # --- what the editor asks for (sidecar/mcp_handlers.py) ---------------------------------------------------
    def reports(self) -> tuple[list[ServerReport], list[str], bool]:
        """Every configured server's report, the settings' problems, and whether the workspace is trusted. Before
        the first start a fresh manager answers: listing starts nothing."""
        from toolgate.mcp.report import server_reports

        manager = self.manager or self.make_manager()
        return server_reports(manager), manager.listing.problems, manager.listing.workspace_trusted

    def _configured(self, name: str) -> tuple[McpManager, ConfiguredServer]:
        manager = self.manager or self.make_manager()
        server = manager.server(name)
        if server is None:
            known = ", ".join(s.name for s in manager.listing.servers) or "none"
            raise UnknownServer(f"No MCP server is named {name!r} in this session's settings (configured: {known}).")
        return manager, server

    async def approve(self, name: str) -> tuple[ServerReport, str]:
        """Approve the server's current settings (and its changed tools, if any) and start it in this session.
        Returns its report now, and the diff of the tools that were approved (empty when none had changed)."""
        from toolgate.mcp.report import server_report

        manager, server = self._configured(name)
        before = server_report(manager, server)
        await anyio.to_thread.run_sync(manager.store.approve, server)
        return await self.restart(name), before.diff

    async def restart(self, name: str) -> ServerReport:
        """(Re)start one server in this session, reading its settings again: a server that failed at start, or
        one approved since, runs without a new session. Starts the session's servers if none has started."""
        from toolgate.mcp.report import server_report

        self._configured(name)
        if self.closed:
            raise UnknownServer("This session is closed; its MCP servers do not start again.")
        fresh = self._host is None
        await self.ensure_started()
        manager = self.manager
        if manager is None:
            raise UnknownServer(f"No MCP server is configured in this session, so {name!r} cannot start.")
        server = manager.server(name) if fresh else None
        if server is None or manager.connections.get(name) is None:
            try:
                server = await manager.restart(name)
            except KeyError:
                raise UnknownServer(f"MCP server {name!r} is no longer in the settings.") from None
        self.sync_tools()
        return server_report(manager, server)

    async def revoke(self, name: str) -> ServerReport:
        """Withdraw the approval and stop the server in this session; its tools leave the model's list."""
        from toolgate.mcp.report import server_report

        manager, server = self._configured(name)
        await anyio.to_thread.run_sync(manager.store.revoke, server)
        if self.manager is not None:
            await self.manager.stop_server(name)
            self.sync_tools()
        return server_report(manager, server)

    def log_file(self, name: str) -> Path:
        manager, server = self._configured(name)
        connection = manager.connections.get(server.name)
        return connection.log_path if connection is not None else manager.directory / "logs" / f"{server.name}.log"

    async def aclose(self) -> None:
        """Stop every server (their process groups die with them) and take their tools away."""
        self.closed = True
        self._stop.set()
        host = self._host
        if host is not None and not host.done():
            with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_GRACE_SECONDS):
                await asyncio.wait({host})
            if not host.done():
                log.error("the MCP servers of %s did not stop in %.0f s", self.workspace, STOP_GRACE_SECONDS)
                host.cancel()
        for name in self._registered:
            self.registry.remove(name)
        self._registered = set()


def _any_configured(workspace: Path, options: McpOptions) -> bool:
    import os

    from toolgate.mcp.config import configured_servers

    environ = os.environ if options.environ is None else options.environ
    listing = configured_servers(workspace, options.home or Path.home(), environ, options.trust_workspace)
    for problem in listing.problems:
        log.warning("%s", problem)
    return bool(listing.servers)


async def _close(value: SessionMcp | None) -> None:
    if value is not None:
        await value.aclose()


# The session's MCP servers, when it has them (`attach_mcp`); closed with the session.
MCP_SERVERS: Dep[SessionMcp | None] = Dep("mcp_servers", lambda _r: None, close=_close)


def attach_mcp(
    session: ToolSession, registry: ToolRegistry, engine: PermissionEngine | None, options: McpOptions
) -> SessionMcp:
    """Give the session MCP servers, started by `ensure_started` and stopped when it closes. `engine` is None
    when a custom policy decides each call itself (no deny rule hides a tool then)."""
    servers = SessionMcp(session.workspace, registry, engine, options)
    deps = session.deps
    deps.override(MCP_SERVERS, servers)
    deps.get(MCP_SERVERS)  # created now, so that closing the session closes it
    return servers
