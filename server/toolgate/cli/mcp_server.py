"""`toolgate mcp serve`: toolgate's file and shell tools as an MCP server, through toolgate's own runner.

Every call goes through the same six steps as in the editor: readFileState (one per MCP session: a stdio
server serves one client), staleness checks, the permission engine with the user's rules and the workspace's
trust, and the output store. A call that needs approval is asked through MCP elicitation when the client
declares it; otherwise it is refused with the reason and the rule that would allow it.
"""

from __future__ import annotations

import contextvars
import itertools
from collections.abc import Sequence
from typing import Any

import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.session import ServerSession

from toolgate import __version__
from toolgate.core.context import ToolContext
from toolgate.core.messages import ImageBlock, TextBlock, ToolResultContent, ToolUse
from toolgate.core.permission import ApprovalAnswer, ApprovalRequest, ReviewAnswer, ReviewRequest
from toolgate.core.tool import AnyTool
from toolgate.runtime import Runtime

SERVED_TOOLS = (
    "Read", "Write", "Edit", "ApplyPatch", "NotebookEdit", "Glob", "Grep", "Bash", "BashOutput", "KillShell",
    "ToolOutput",
)  # fmt: skip

_current_session: contextvars.ContextVar[ServerSession | None] = contextvars.ContextVar("mcp_session", default=None)
_APPROVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"allow": {"type": "boolean", "title": "Allow", "description": "Allow this call to run once"}},
    "required": ["allow"],
}


def annotations_for(tool: AnyTool) -> mcp_types.ToolAnnotations:
    """The hints MCP clients show, from the traits the tool declares (what it really does)."""
    traits = tool.traits
    return mcp_types.ToolAnnotations(
        read_only_hint=traits.read_only,
        destructive_hint=traits.destructive,
        idempotent_hint=traits.idempotent,
        open_world_hint=traits.open_world,
    )


def _can_elicit(session: ServerSession | None) -> bool:
    if session is None:
        return False
    capabilities = session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


async def _elicit_yes(session: ServerSession, message: str) -> bool:
    answer = await session.elicit_form(message, _APPROVE_SCHEMA)
    return answer.action == "accept" and bool((answer.content or {}).get("allow"))


class ElicitingApprover:
    """Asks the MCP client's user (elicitation) when the client can; otherwise nobody can be asked."""

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        session = _current_session.get()
        if not _can_elicit(session):
            return ApprovalAnswer(decision="deny", reason="non_interactive")
        assert session is not None
        message = f"toolgate: allow {request.tool_name} {request.headline()}?\n{request.reason}"
        if await _elicit_yes(session, message):
            return ApprovalAnswer(decision="allow")
        return ApprovalAnswer(decision="deny")

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        session = _current_session.get()
        if not _can_elicit(session):
            return ReviewAnswer(decision="reject", reason="non_interactive")
        assert session is not None
        paths = ", ".join(str(f.path) for f in request.files)
        message = f"toolgate: apply {request.tool_name}'s change to {paths}?\n{request.reason}"
        return ReviewAnswer(decision="accept" if await _elicit_yes(session, message) else "reject")


def _mcp_content(content: ToolResultContent) -> list[mcp_types.TextContent | mcp_types.ImageContent]:
    if isinstance(content, str):
        return [mcp_types.TextContent(type="text", text=content)]
    blocks: list[mcp_types.TextContent | mcp_types.ImageContent] = []
    for block in content:
        if isinstance(block, TextBlock):
            blocks.append(mcp_types.TextContent(type="text", text=block.text))
        elif isinstance(block, ImageBlock):
            blocks.append(
                mcp_types.ImageContent(type="image", data=block.source.data, mime_type=block.source.media_type)
            )
    return blocks


def build_server(runtime: Runtime, names: Sequence[str] = SERVED_TOOLS) -> Server[Any]:
    ids = itertools.count(1)
    served = [tool for tool in runtime.registry.ordered() if tool.name in names]

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        describe = runtime.runner.describe_context()
        return mcp_types.ListToolsResult(
            tools=[
                mcp_types.Tool(
                    name=tool.name,
                    description=tool.description(describe),
                    input_schema=tool.input_schema(),
                    annotations=annotations_for(tool),
                )
                for tool in served
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        if params.name not in {t.name for t in served}:
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=f"toolgate serves no tool named {params.name!r}.")],
                is_error=True,
            )
        token = _current_session.set(ctx.session)
        try:
            use = ToolUse(id=f"mcp-{next(ids)}", name=params.name, input=dict(params.arguments or {}))
            [result] = await runtime.orchestrator.run_turn([use])
        finally:
            _current_session.reset(token)
        return mcp_types.CallToolResult(content=_mcp_content(result.content), is_error=result.is_error)

    return Server(
        "toolgate",
        version=__version__,
        instructions="toolgate's file and shell tools. Read a file before you Edit or Write it.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
