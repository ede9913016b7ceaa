"""How MCP content maps to tool_result content, and who may mark a tool read-only (no server needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types

from toolgate.core.messages import ImageBlock, TextBlock
from toolgate.mcp.approvals import ApprovalStore
from toolgate.mcp.config import ConfiguredServer, StdioServerConfig
from toolgate.mcp.connection import McpConnection
from toolgate.mcp.tool import McpArguments, McpTool


def tool_of(tmp_path: Path, scope: Any = "user", **config: Any) -> McpTool:
    server = ConfiguredServer("s", scope, tmp_path / ".mcp.json", StdioServerConfig(command="x", **config))
    connection = McpConnection(server, ApprovalStore(tmp_path), tmp_path, tmp_path)
    spec = mcp_types.Tool(name="t", description="d", input_schema={"type": "object"})
    return McpTool(connection, spec, "mcp__s__t")


def test_links_embedded_resources_and_images_map_to_blocks(tmp_path: Path) -> None:
    tool = tool_of(tmp_path)
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.ResourceLink(type="resource_link", name="spec", uri="file:///spec.md", description="the spec"),
            mcp_types.EmbeddedResource(
                type="resource", resource=mcp_types.TextResourceContents(uri="mem://a", text="inline text")
            ),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.BlobResourceContents(uri="mem://b", blob="AAAA", mime_type="image/png"),
            ),
            mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/tiff"),
        ]
    )
    rendered = tool.to_result(result, None)  # type: ignore[arg-type]
    assert not rendered.is_error and isinstance(rendered.content, list)
    link, embedded, image, tiff = rendered.content
    assert isinstance(link, TextBlock) and "file:///spec.md" in link.text and "the spec" in link.text
    assert isinstance(embedded, TextBlock) and embedded.text.endswith("inline text")
    assert isinstance(image, ImageBlock) and image.source.media_type == "image/png"
    assert isinstance(tiff, TextBlock) and "image/tiff" in tiff.text


def test_an_error_result_says_the_server_reported_a_failure(tmp_path: Path) -> None:
    result = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="boom")], is_error=True)
    rendered = tool_of(tmp_path).to_result(result, None)  # type: ignore[arg-type]
    assert rendered.is_error and isinstance(rendered.content, str) and rendered.content.endswith("boom")


def test_only_the_users_own_settings_make_a_tool_read_only(tmp_path: Path) -> None:
    arguments = McpArguments()
    assert tool_of(tmp_path, readOnly=True).is_read_only(arguments)
    assert tool_of(tmp_path, readOnlyTools=["t"]).is_concurrency_safe(arguments)
    assert not tool_of(tmp_path).is_read_only(arguments)
    assert not tool_of(tmp_path, "workspace", readOnly=True).is_read_only(arguments)
