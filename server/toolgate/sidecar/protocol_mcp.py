"""Wire models of toolgate/mcp/servers|approve|revoke|restart|log (and the toolgate/mcp/changed notification): a
session's MCP servers, for the editor's MCP view and its approval card. The methods are listed here
(`MCP_METHODS`) and joined into `protocol.METHODS`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from toolgate.sidecar.wire_model import Method, SessionId, WireModel

McpServerState = Literal[
    "blocked-untrusted", "needs-approval", "stopped", "starting", "running", "changed", "crashed", "failed"
]


class McpToolInfo(WireModel):
    name: str  # as the model sees it: mcp__server__tool
    original_name: str  # as the server calls it
    description: str
    read_only_hint: bool | None  # what the server says (shown, never trusted)
    read_only: bool  # what the person's own settings say


class McpServerInfo(WireModel):
    name: str
    scope: Literal["user", "workspace"]
    source: str  # the settings file that names it
    transport: Literal["stdio", "http", "sse"]
    command: str  # what it runs (stdio) or its URL (http)
    state: McpServerState
    reason: str  # why it is in that state, or its last error; empty when running
    approved: bool
    pinned: bool  # its tool list is pinned
    changed: bool  # a tool list that differs from the pin waits for approval (its tools are hidden)
    changed_tools: list[str]
    diff: str  # pinned → changed tool list, unified; empty unless `changed`
    tools: list[McpToolInfo]
    log: str | None  # the server's stderr file


class McpServersResult(WireModel):
    servers: list[McpServerInfo]
    problems: list[str]  # settings entries that cannot be used, in words
    workspace_trusted: bool


class McpServerRef(WireModel):
    session_id: SessionId
    name: str = Field(min_length=1)


class McpServerResult(WireModel):
    server: McpServerInfo
    approved_diff: str = ""  # approve: the tool changes that were approved (empty when none had changed)


class McpLogParams(McpServerRef):
    max_bytes: int = Field(default=64 * 1024, ge=1, le=4 * 1024 * 1024)


class McpLogResult(WireModel):
    path: str
    text: str  # the end of the file (up to max_bytes)
    truncated: bool  # the file is longer than `text`


class McpServersParams(WireModel):
    session_id: SessionId


class McpChangedParams(McpServersResult):
    """A session's servers after one of them changed while the session runs (its tools changed, it crashed or
    was restarted): what `toolgate/mcp/servers` would answer now."""

    session_id: SessionId


MCP_SERVERS_LIST = "toolgate/mcp/servers"
MCP_APPROVE = "toolgate/mcp/approve"
MCP_REVOKE = "toolgate/mcp/revoke"
MCP_RESTART = "toolgate/mcp/restart"
MCP_LOG = "toolgate/mcp/log"
MCP_CHANGED = "toolgate/mcp/changed"

MCP_METHODS: tuple[Method, ...] = (
    Method(
        MCP_SERVERS_LIST, "clientToServer", McpServersParams, McpServersResult, "A session's MCP servers and tools."
    ),
    Method(
        MCP_APPROVE,
        "clientToServer",
        McpServerRef,
        McpServerResult,
        "Approve an MCP server's settings (and changed tools), then start it in the session.",
    ),
    Method(MCP_REVOKE, "clientToServer", McpServerRef, McpServerResult, "Withdraw an approval and stop the server."),
    Method(
        MCP_RESTART, "clientToServer", McpServerRef, McpServerResult, "Start an MCP server again (reads its settings)."
    ),
    Method(MCP_LOG, "clientToServer", McpLogParams, McpLogResult, "The end of an MCP server's stderr log."),
    Method(
        MCP_CHANGED,
        "serverToClient",
        McpChangedParams,
        None,
        "A session's MCP servers changed (tools, state) while it runs; sent to the client that asked about them.",
    ),
)
