"""toolgate/mcp/servers|approve|revoke|restart|log: a session's MCP servers, for the editor's MCP view and card.

The session's servers do the work (toolgate.mcp.session); this module maps their reports to the wire models.
Listing starts nothing; approve and restart start the server in that session (a server that failed at start
is retried without a new session). Once the client has asked about a session's servers, it is told of their
changes as they happen (toolgate/mcp/changed): a `tools/list_changed` in the middle of a turn reaches the
approval card then, not when the turn ends.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.sidecar import protocol_mcp as p
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:  # types only: the server imports this module before initialize
    from toolgate.mcp.report import ServerReport
    from toolgate.mcp.session import SessionMcp
    from toolgate.runtime import Runtime

_NONE = "This session has no MCP servers (it was built without them). Open a new session from the editor to get them."


def server_info(report: ServerReport) -> p.McpServerInfo:
    """The report as the wire model: the same fields (the report's log is a path)."""
    fields = dataclasses.asdict(report)
    fields["log"] = str(report.log) if report.log is not None else None
    return p.McpServerInfo.model_validate(fields)


def _tail(path: Any, max_bytes: int) -> tuple[str, bool]:
    try:
        with open(path, "rb") as source:
            size = source.seek(0, 2)
            source.seek(max(0, size - max_bytes))
            data = source.read()
    except FileNotFoundError:
        return "", False
    return data.decode("utf-8", errors="replace"), size > max_bytes


def mcp_handlers(
    runtime_of: Callable[[str], Runtime], notify: Callable[[str, Any], None] | None = None
) -> dict[str, Callable[[Any], Awaitable[WireModel]]]:
    """The five methods, for the server's handler table. `runtime_of` finds a live session's runtime (and raises
    the server's error for an unknown one); `notify` sends a notification to the client (toolgate/mcp/changed)."""

    def servers_of(session_id: str) -> SessionMcp:
        from toolgate.mcp.session import MCP_SERVERS

        servers = runtime_of(session_id).session.deps.get(MCP_SERVERS)
        if servers is None:
            raise JsonRpcInvalidParams(message=_NONE)
        if notify is not None and servers.on_change is None:
            servers.on_change = lambda: changed(session_id, servers)
        return servers

    def changed(session_id: str, servers: SessionMcp) -> None:
        assert notify is not None
        reports, problems, trusted = servers.reports()
        params = p.McpChangedParams(
            session_id=session_id,
            servers=[server_info(r) for r in reports],
            problems=problems,
            workspace_trusted=trusted,
        )
        notify(p.MCP_CHANGED, params.wire())

    async def guarded(work: Awaitable[ServerReport], diff: str = "") -> p.McpServerResult:
        from toolgate.mcp.approvals import ApprovalError
        from toolgate.mcp.session import UnknownServer

        try:
            return p.McpServerResult(server=server_info(await work), approved_diff=diff)
        except (UnknownServer, ApprovalError) as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None

    async def listing(params: p.McpServersParams) -> p.McpServersResult:
        reports, problems, trusted = await anyio.to_thread.run_sync(servers_of(params.session_id).reports)
        return p.McpServersResult(
            servers=[server_info(r) for r in reports], problems=problems, workspace_trusted=trusted
        )

    async def approve(params: p.McpServerRef) -> p.McpServerResult:
        from toolgate.mcp.approvals import ApprovalError
        from toolgate.mcp.session import UnknownServer

        try:
            report, diff = await servers_of(params.session_id).approve(params.name)
        except (UnknownServer, ApprovalError) as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None
        return p.McpServerResult(server=server_info(report), approved_diff=diff)

    async def revoke(params: p.McpServerRef) -> p.McpServerResult:
        return await guarded(servers_of(params.session_id).revoke(params.name))

    async def restart(params: p.McpServerRef) -> p.McpServerResult:
        return await guarded(servers_of(params.session_id).restart(params.name))

    async def log(params: p.McpLogParams) -> p.McpLogResult:
        from toolgate.mcp.session import UnknownServer

        try:
            path = servers_of(params.session_id).log_file(params.name)
        except UnknownServer as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None
        text, truncated = await anyio.to_thread.run_sync(_tail, path, params.max_bytes)
        return p.McpLogResult(path=str(path), text=text, truncated=truncated)

    return {
        p.MCP_SERVERS_LIST: listing,
        p.MCP_APPROVE: approve,
        p.MCP_REVOKE: revoke,
        p.MCP_RESTART: restart,
        p.MCP_LOG: log,
    }
