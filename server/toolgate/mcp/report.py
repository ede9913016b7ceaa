"""What a person needs to know about each configured MCP server: where it comes from, whether it runs (and why
not), its tools with the server's `readOnlyHint`, whether its tool list is pinned or changed (with the diff),
the last error and where its log is. The sidecar's MCP methods and the editor's MCP view show this.

A server that has not started in this session still shows the tools it was pinned with, so a person can
see what they approved before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgate.mcp.approvals import ApprovalError, ServerApproval
from toolgate.mcp.config import ConfiguredServer, StdioServerConfig
from toolgate.mcp.manager import McpManager
from toolgate.mcp.names import tool_names
from toolgate.mcp.pinning import ToolSnapshot, changed_tools, snapshot_diff


@dataclass(frozen=True, slots=True)
class ToolReport:
    name: str  # as the model sees it: mcp__server__tool
    original_name: str  # as the server calls it
    description: str
    read_only_hint: bool | None  # what the server says; never trusted on its own
    read_only: bool  # what the person's own settings say (readOnly / readOnlyTools of a user server)


@dataclass(frozen=True, slots=True)
class ServerReport:
    name: str
    scope: str  # user | workspace
    source: str  # the settings file it comes from
    transport: str  # stdio | http | sse
    command: str  # what runs (stdio) or where it is (http), for the person approving it
    state: str  # blocked-untrusted | needs-approval | stopped | starting | running | changed | crashed | failed
    reason: str  # why it is in that state, or its last error
    approved: bool
    pinned: bool  # a tool list is pinned for its current settings
    changed: bool  # a tool list different from the pin is waiting for approval
    changed_tools: list[str]
    diff: str  # pinned → waiting tool list (empty unless changed)
    tools: list[ToolReport]
    log: Path | None


def _hint(annotations: dict[str, Any]) -> bool | None:
    value = annotations.get("readOnlyHint", annotations.get("read_only_hint"))
    return value if isinstance(value, bool) else None


def _tools(server: ConfiguredServer, snapshot: ToolSnapshot) -> list[ToolReport]:
    names = tool_names(server.name, list(snapshot))
    config = server.config
    reports = [
        ToolReport(
            name=names[original],
            original_name=original,
            description=str(spec.get("description", "")),
            read_only_hint=_hint(spec.get("annotations") or {}),
            read_only=server.scope == "user" and (config.readOnly or original in config.readOnlyTools),
        )
        for original, spec in snapshot.items()
    ]
    return sorted(reports, key=lambda t: t.name)


def _command(server: ConfiguredServer) -> str:
    config = server.config
    if isinstance(config, StdioServerConfig):
        return " ".join([config.command, *config.args])
    return config.url


def server_report(manager: McpManager, server: ConfiguredServer) -> ServerReport:
    allowed, blocked_state, blocked_reason = manager.may_start(server)
    try:
        approval: ServerApproval | None = manager.store.get(server)
    except ApprovalError:
        approval = None  # may_start has said why already
    connection = manager.connections.get(server.name)
    pinned = approval.snapshot if approval is not None else None
    pending = approval.pending if approval is not None else None
    if connection is not None:
        state: str = connection.state
        reason = connection.last_error or ""
        snapshot = connection.snapshot or pinned or {}
    elif not allowed:
        state, reason, snapshot = blocked_state, blocked_reason, pinned or {}
    else:
        blocked = manager.blocked(server.name)
        state, reason = blocked or ("stopped", "not started in this session yet: it starts with the first message")
        snapshot = pinned or {}
    changed = pending is not None
    return ServerReport(
        name=server.name,
        scope=server.scope,
        source=str(server.source),
        transport=server.config.type,
        command=_command(server),
        state=state,
        reason=reason,
        approved=approval is not None,
        pinned=pinned is not None,
        changed=changed,
        changed_tools=changed_tools(pinned or {}, pending) if pending is not None else [],
        diff=snapshot_diff(pinned or {}, pending) if pending is not None else "",
        tools=_tools(server, snapshot),
        log=connection.log_path if connection is not None else manager.directory / "logs" / f"{server.name}.log",
    )


def server_reports(manager: McpManager) -> list[ServerReport]:
    return [server_report(manager, server) for server in manager.listing.servers]
