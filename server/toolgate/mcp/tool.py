"""An MCP server's tool as a toolgate tool: the same contract, the same runner, the same permission ladder.

Never read-only or concurrency-safe on the server's word: a server's `readOnlyHint` is shown in the
description, and only the person's own settings (`readOnly` / `readOnlyTools` on the server) make a tool
read-only. The input schema is the server's, checked here before the call so a bad call costs no round trip.
"""

from __future__ import annotations

import functools
import json
from typing import Any, ClassVar

import mcp_types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import ConfigDict

from toolgate.core.context import ToolContext
from toolgate.core.errors import ErrorKind, StateError, ToolError, ToolFailure
from toolgate.core.messages import ContentBlock, ImageBlock, ImageSource, TextBlock
from toolgate.core.tool import DescribeContext, Rendered, Tool, ToolInput
from toolgate.mcp.connection import McpConnection, ServerUnavailable

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


class McpArguments(ToolInput):
    """Whatever the server's schema takes: checked against that schema in `validate`."""

    model_config = ConfigDict(extra="allow")


class BadArguments(ToolError):
    kind = ErrorKind.INVALID_INPUT


class McpTool(Tool[McpArguments, mcp_types.CallToolResult]):
    input_model: ClassVar[type[ToolInput]] = McpArguments
    external: ClassVar[bool] = True

    def __init__(self, connection: McpConnection, spec: mcp_types.Tool, name: str) -> None:
        self.connection = connection
        self.spec = spec
        self.name = name  # type: ignore[misc]  # per instance: the name comes from the server
        self.original_name = spec.name
        server, config = connection.server, connection.server.config
        # Only the person's own settings may say "read-only": a repository's .mcp.json saying it of its own
        # server would let that server's tools run without asking.
        marked = config.readOnly or spec.name in config.readOnlyTools
        self.marked_read_only = marked and server.scope == "user"
        self._validator = _validator(json.dumps(spec.input_schema, sort_keys=True))

    @property
    def server_name(self) -> str:
        return self.connection.server.name

    def description(self, ctx: DescribeContext) -> str:
        text = self.spec.description or f"The {self.spec.name} tool of the {self.server_name} MCP server."
        hints = self.spec.annotations
        if hints is not None and hints.read_only_hint:
            text += "\n\n(The server says this tool only reads; toolgate still asks unless your settings allow it.)"
        return text

    def input_schema(self) -> dict[str, Any]:
        return dict(self.spec.input_schema)

    def is_read_only(self, tool_input: McpArguments) -> bool:
        return self.marked_read_only

    def is_concurrency_safe(self, tool_input: McpArguments) -> bool:
        return self.marked_read_only

    def summary(self, tool_input: McpArguments, workspace: Any) -> str:
        return json.dumps(self._arguments(tool_input), ensure_ascii=False, sort_keys=True)

    @staticmethod
    def _arguments(tool_input: McpArguments) -> dict[str, Any]:
        return dict(tool_input.model_extra or {})

    async def validate(self, tool_input: McpArguments, ctx: ToolContext) -> None:
        if self.connection.state == "changed":
            # Its tools changed after this list was made: nothing of that server runs until re-approved.
            raise StateError(
                f"The {self.server_name} MCP server's tools changed since the user approved them, so its tools are "
                "withheld until the user reviews the change and approves it again. Do without them for now."
            )
        if self._validator is None:
            raise ToolFailure(
                f"The {self.server_name} MCP server gave {self.spec.name} an input schema that is not valid JSON "
                "Schema, so toolgate cannot check calls to it. The tool cannot be used until the server fixes it."
            )
        errors = list(self._validator.iter_errors(self._arguments(tool_input)))
        if errors:
            errors.sort(key=lambda e: list(e.path))
            parts = [f"{'.'.join(str(p) for p in e.path) or '(top level)'}: {e.message}" for e in errors[:5]]
            raise BadArguments(
                f"The input does not fit {self.name}'s schema: " + "; ".join(parts) + ". Fix these and call again."
            )

    async def call(self, tool_input: McpArguments, ctx: ToolContext) -> mcp_types.CallToolResult:
        try:
            return await self.connection.call(
                self.spec.name, self._arguments(tool_input), self.connection.server.config.timeout
            )
        except ServerUnavailable as exc:
            raise ToolFailure(str(exc)) from None

    def to_result(self, data: mcp_types.CallToolResult, ctx: ToolContext) -> Rendered:
        failed = f"The {self.server_name} MCP server reports that {self.spec.name} failed:"
        texts = [item.text for item in data.content if isinstance(item, mcp_types.TextContent)]
        if texts and len(texts) == len(data.content):
            # The usual answer, text only: its text as the body, not copied into blocks first (a result of
            # megabytes would be copied once more for nothing; the join of one text is that text).
            body = "\n".join(texts)
            return Rendered(f"{failed}\n{body}" if data.is_error else body, is_error=bool(data.is_error))
        blocks: list[ContentBlock] = [block for item in data.content for block in _blocks(item)]
        if data.structured_content is not None and not blocks:
            blocks.append(TextBlock(text=json.dumps(data.structured_content, ensure_ascii=False, indent=2)))
        if not blocks:
            blocks.append(TextBlock(text=f"({self.name} returned no content.)"))
        if data.is_error:
            blocks.insert(0, TextBlock(text=failed))
        # One text body when there is no image, so long results go through the output store like any tool's.
        if all(isinstance(b, TextBlock) for b in blocks):
            return Rendered("\n".join(b.text for b in blocks if isinstance(b, TextBlock)), is_error=bool(data.is_error))
        return Rendered(blocks, is_error=bool(data.is_error))


@functools.lru_cache(maxsize=512)
def _validator(schema: str) -> Draft202012Validator | None:
    """The checked, compiled validator of a schema (JSON text), None when it is not valid JSON Schema. Cached: a
    pinned tool keeps its schema, and its tool objects are made again on every restart and re-listing."""
    loaded = json.loads(schema)
    try:
        Draft202012Validator.check_schema(loaded)
    except SchemaError:
        return None
    return Draft202012Validator(loaded)


def _blocks(item: Any) -> list[ContentBlock]:
    if isinstance(item, mcp_types.TextContent):
        return [TextBlock(text=item.text)]
    if isinstance(item, mcp_types.ImageContent):
        if item.mime_type in IMAGE_TYPES:
            return [ImageBlock(source=ImageSource(media_type=item.mime_type, data=item.data))]
        return [TextBlock(text=f"[an image of type {item.mime_type}, which cannot be shown]")]
    if isinstance(item, mcp_types.AudioContent):
        return [TextBlock(text=f"[audio of type {item.mime_type}, which cannot be shown]")]
    if isinstance(item, mcp_types.ResourceLink):
        about = f" — {item.description}" if item.description else ""
        return [TextBlock(text=f"[resource link: {item.name} <{item.uri}>{about}]")]
    if isinstance(item, mcp_types.EmbeddedResource):
        resource = item.resource
        if isinstance(resource, mcp_types.TextResourceContents):
            return [TextBlock(text=f"[resource {resource.uri}]\n{resource.text}")]
        if resource.mime_type in IMAGE_TYPES:
            return [ImageBlock(source=ImageSource(media_type=resource.mime_type or "", data=resource.blob))]
        return [TextBlock(text=f"[binary resource {resource.uri} ({resource.mime_type or 'unknown type'}), not shown]")]
    return [TextBlock(text=f"[content of type {getattr(item, 'type', '?')} that toolgate cannot show]")]
