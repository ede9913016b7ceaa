"""The Anthropic Messages API through the official SDK: streaming, tool use, images, prompt caching.

Prompt caching: the stable prefix (tool definitions, then the system prompt) carries `cache_control`
markers and is built from the same inputs in the same order every turn, so its bytes do not change and
each request reads it from the cache. A third marker on the newest message caches the conversation so far.
"""

from __future__ import annotations

from typing import Any, cast

import anthropic
import httpx2

from toolgate.agent.conversation import ChatMessage
from toolgate.agent.events import Usage
from toolgate.agent.model_catalog import model_info
from toolgate.agent.providers.base import (
    DEFAULT_MODELS,
    ModelConfig,
    ModelError,
    ModelRequest,
    ProviderName,
    ReplyCompleted,
    StreamSink,
    TextArrived,
    ToolUseStarted,
    connection_error,
    describe_status,
    parse_tool_input,
    retry_after_seconds,
)
from toolgate.core.messages import ImageBlock, TextBlock, ToolResult, ToolUse

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def _block(block: Any) -> dict[str, Any]:
    if isinstance(block, ToolUse):
        # The API wants an object; a call whose arguments were not JSON was answered with an error already.
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": _as_object(block.input)}
    if isinstance(block, ToolResult):
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
        out["content"] = (
            block.content if isinstance(block.content, str) else [b.model_dump(mode="json") for b in block.content]
        )
        if block.is_error:
            out["is_error"] = True
        return out
    if isinstance(block, TextBlock | ImageBlock):
        return block.model_dump(mode="json")
    raise TypeError(f"cannot send a {type(block).__name__} block")


def _as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def build_params(request: ModelRequest, model: str) -> dict[str, Any]:
    """The request body (everything except `stream`). Pure, so tests can compare prefixes byte for byte."""
    tools: list[dict[str, Any]] = [d.model_dump(mode="json") for d in request.tools]
    if tools:
        tools[-1]["cache_control"] = EPHEMERAL
    messages = [message_param(m) for m in request.messages]
    if messages and messages[-1]["content"]:
        last = messages[-1]["content"][-1]
        messages[-1]["content"][-1] = {**last, "cache_control": EPHEMERAL}
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": EPHEMERAL}],
        "messages": messages,
    }
    if tools:
        params["tools"] = tools
    return params


def message_param(message: ChatMessage) -> dict[str, Any]:
    return {"role": message.role, "content": [_block(b) for b in message.content]}


class AnthropicProvider:
    name: ProviderName = "anthropic"

    def __init__(self, config: ModelConfig) -> None:
        options: dict[str, Any] = {"max_retries": 0, "timeout": config.timeout_seconds}  # the loop retries
        if config.api_key is not None:
            options["api_key"] = config.api_key.get_secret_value()
        if config.base_url:
            options["base_url"] = config.base_url
        self._client = anthropic.AsyncAnthropic(**options)
        self.model = config.model or DEFAULT_MODELS["anthropic"]
        self.base_url = str(self._client.base_url).rstrip("/")
        self.max_tokens = config.max_tokens
        self.info = model_info(self.model, context_window=config.context_window, prices=config.prices)

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, request: ModelRequest, sink: StreamSink) -> None:
        params = build_params(request, self.model)
        try:
            await self._stream(params, sink)
        except anthropic.APIStatusError as exc:
            status = exc.status_code if exc.status_code >= 400 else None  # an error event inside a 200 stream
            error = describe_status("anthropic", status, exc.type, exc.api_message or "", self.base_url, self.model)
            error.retry_after = retry_after_seconds(exc.response.headers) if status else None
            raise error from exc
        except anthropic.APITimeoutError as exc:
            raise connection_error("anthropic", self.base_url, exc, timed_out=True) from exc
        except anthropic.APIConnectionError as exc:
            raise connection_error("anthropic", self.base_url, exc, timed_out=False) from exc
        except httpx2.TimeoutException as exc:  # raised while reading the stream, after the request succeeded
            raise connection_error("anthropic", self.base_url, exc, timed_out=True) from exc
        except httpx2.TransportError as exc:
            raise connection_error("anthropic", self.base_url, exc, timed_out=False) from exc
        except TypeError as exc:
            if "authentication" not in str(exc):
                raise
            raise ModelError(
                "config",
                "No Anthropic API key: set ANTHROPIC_API_KEY in the environment (or the key in the editor's settings).",
            ) from exc
        except anthropic.AnthropicError as exc:
            raise ModelError("bad_request", f"The anthropic API call failed: {exc}") from exc

    async def _stream(self, params: dict[str, Any], sink: StreamSink) -> None:
        texts: dict[int, str] = {}
        uses: dict[int, tuple[str, str]] = {}
        inputs: dict[int, str] = {}
        usage = Usage()
        stop_reason: str | None = None
        # The raw event stream, not the SDK's accumulating helper: that one gives up on arguments that are not
        # JSON, and we want to answer such a call with an error instead of losing the whole reply.
        stream = await self._client.messages.create(**cast(Any, params), stream=True)
        async with stream:
            async for event in stream:
                if event.type == "message_start":
                    u = event.message.usage
                    usage = Usage(
                        input_tokens=u.input_tokens or 0,
                        cache_creation_input_tokens=u.cache_creation_input_tokens or 0,
                        cache_read_input_tokens=u.cache_read_input_tokens or 0,
                    )
                elif event.type == "content_block_start":
                    block = event.content_block
                    if block.type == "text":
                        texts[event.index] = block.text
                        if block.text:
                            sink(TextArrived(block.text))
                    elif block.type == "tool_use":
                        uses[event.index] = (block.id, block.name)
                        inputs[event.index] = ""
                        sink(ToolUseStarted(block.id, block.name))
                elif event.type == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta" and event.index in texts:
                        texts[event.index] += delta.text
                        sink(TextArrived(delta.text))
                    elif delta.type == "input_json_delta" and event.index in inputs:
                        inputs[event.index] += delta.partial_json
                elif event.type == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    usage.output_tokens = event.usage.output_tokens or 0
                    if event.usage.input_tokens is not None:
                        usage.input_tokens = event.usage.input_tokens
        content: list[TextBlock | ToolUse] = []
        malformed: dict[str, str] = {}
        for index in sorted({*texts, *uses}):
            if index in texts:
                if texts[index].strip():
                    content.append(TextBlock(text=texts[index]))
                continue
            use_id, name = uses[index]
            value, problem = parse_tool_input(inputs[index], cut_off=stop_reason == "max_tokens")
            content.append(ToolUse(id=use_id, name=name, input=value))
            if problem:
                malformed[use_id] = problem
        sink(ReplyCompleted(content=content, stop_reason=stop_reason, usage=usage, malformed=malformed))
