"""The messages that cross the tool layer's boundary: tool_use in, tool_result out.

They follow the Anthropic Messages API shapes, which every other part of toolgate (the headless CLI, the
sidecar protocol, the agent loop) reuses unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class TextBlock(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["text"] = "text"
    text: str


class ImageSource(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["base64"] = "base64"
    media_type: str
    data: str


class ImageBlock(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["image"] = "image"
    source: ImageSource


ContentBlock = TextBlock | ImageBlock
ToolResultContent = str | list[ContentBlock]


class ToolUse(BaseModel):
    """One tool call as the model wrote it. `input` stays untyped here: the runner validates it per tool."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    type: Literal["tool_use"] = "tool_use"
    id: str = Field(min_length=1)
    name: str
    input: Any = Field(default_factory=dict)


class ToolResult(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: ToolResultContent
    is_error: bool = False

    def text(self) -> str:
        """The result's text, for logs and tests; image blocks appear as a placeholder."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text if isinstance(b, TextBlock) else f"[image {b.source.media_type}]" for b in self.content)
