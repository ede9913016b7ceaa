"""OpenAI Chat Completions through the official SDK: tools and streaming, for any compatible server.

Ollama, vLLM, LM Studio and others speak this API at their own base URL. The conversation is converted
from the neutral (Anthropic-shaped) blocks: tool_uses become `tool_calls`, each tool_result becomes a
`tool` message, and images from tool results (which `tool` messages cannot carry) follow in a user message.
Tool-call arguments arrive as JSON fragments keyed by call index and are reassembled here.

A streamed reply carries its usage only when the request asks with `stream_options`; a compatible server that does
not know the parameter refuses the whole request (a 400 or 422 naming it). That refusal is answered by sending the
same request again without it, once, and not asking that server (its base URL) again for the sidecar's life: a model
switch makes a new provider, which finds what the last one learned in `KNOWN_SERVERS`. The context line then shows
the loop's estimate, as for a server that sends no usage.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any, cast

import httpx2
import openai

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
from toolgate.core.tool import ToolDefinition

OFFICIAL_HOST = "api.openai.com"
# A local server needs no key, but the SDK refuses to start without one.
LOCAL_PLACEHOLDER_KEY = "not-needed"
# How a server that does not know `stream_options` names it when it refuses a request: the parameter or its field.
_STREAM_OPTION_NAMES = ("stream_options", "include_usage")
log = logging.getLogger("toolgate.agent")


def _image_part(image: ImageBlock) -> dict[str, Any]:
    url = f"data:{image.source.media_type};base64,{image.source.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _arguments(value: Any) -> str:
    # Arguments that were not JSON go back exactly as the model wrote them.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def tool_param(definition: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.input_schema,
        },
    }


def messages_param(system: str, messages: list[ChatMessage]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in messages:
        if message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.text() or None}
            calls = [
                {"id": u.id, "type": "function", "function": {"name": u.name, "arguments": _arguments(u.input)}}
                for u in message.tool_uses()
            ]
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        parts: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolResult):
                text, images = _split_result(block)
                out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": text})
                if images:
                    parts.append({"type": "text", "text": f"(Images returned by tool call {block.tool_use_id}:)"})
                    parts.extend(_image_part(i) for i in images)
            elif isinstance(block, TextBlock):
                parts.append({"type": "text", "text": block.text})
            elif isinstance(block, ImageBlock):
                parts.append(_image_part(block))
        if parts:
            only_text = all(p["type"] == "text" for p in parts)
            content: Any = "\n\n".join(p["text"] for p in parts) if only_text else parts
            out.append({"role": "user", "content": content})
    return out


def _split_result(result: ToolResult) -> tuple[str, list[ImageBlock]]:
    if isinstance(result.content, str):
        return result.content or "(no output)", []
    texts = [b.text for b in result.content if isinstance(b, TextBlock)]
    images = [b for b in result.content if isinstance(b, ImageBlock)]
    text = "\n".join(texts)
    if images:
        text += ("\n" if text else "") + f"({len(images)} image(s) follow in the next user message.)"
    return text or "(no output)", images


def refuses_stream_options(exc: openai.APIStatusError) -> bool:
    """Whether `exc` is a server refusing the request because it does not know `stream_options`: a 400 (an
    OpenAI-shaped error) or 422 (a validation error) whose error names it. Any other refusal is not this one."""
    if exc.status_code not in (400, 422):
        return False
    said = f"{json.dumps(exc.body, default=str)} {exc.message}".lower()
    return any(name in said for name in _STREAM_OPTION_NAMES)


@dataclass
class ServerTraits:
    """What providers learned about a server: shared by every provider for its base URL, in this process."""

    streams_usage_options: bool = True  # False: it refused `stream_options`; requests no longer carry it


# By base URL (as the SDK resolved it, without a trailing slash). Never forgotten: a server that refused once is
# taken to refuse until the process ends (a different server at the same address then reports no usage, estimated).
KNOWN_SERVERS: dict[str, ServerTraits] = {}


@dataclass
class _Call:
    id: str
    name: str = ""
    arguments: str = ""
    announced: bool = False


class OpenAIProvider:
    name: ProviderName = "openai"

    def __init__(self, config: ModelConfig) -> None:
        options: dict[str, Any] = {"max_retries": 0, "timeout": config.timeout_seconds}  # the loop retries
        if config.base_url:
            options["base_url"] = config.base_url
        if config.api_key is not None:
            options["api_key"] = config.api_key.get_secret_value()
        try:
            self._client = openai.AsyncOpenAI(**options)
        except openai.OpenAIError:
            # No key anywhere. Fine for a local server; the official API would only answer 401.
            self._client = openai.AsyncOpenAI(**options, api_key=LOCAL_PLACEHOLDER_KEY)
        self.model = config.model or DEFAULT_MODELS["openai"]
        self.base_url = str(self._client.base_url).rstrip("/")
        self.max_tokens = config.max_tokens
        self.info = model_info(self.model, context_window=config.context_window, prices=config.prices)
        self._official = OFFICIAL_HOST in self.base_url
        self._server = KNOWN_SERVERS.setdefault(self.base_url, ServerTraits())

    async def aclose(self) -> None:
        await self._client.close()

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages_param(request.system, request.messages),
            "stream": True,
        }
        if request.tools:
            params["tools"] = [tool_param(d) for d in request.tools]
        # A streamed reply carries its usage only when asked for, from the official API and compatible servers
        # alike (vLLM, Ollama, LM Studio, llama.cpp); without it the context line and the cost read zero.
        if self._server.streams_usage_options:
            params["stream_options"] = {"include_usage": True}
        if self._official:
            # The official API wants the newer name; compatible servers know the older one.
            params["max_completion_tokens"] = request.max_tokens
        else:
            params["max_tokens"] = request.max_tokens
        return params

    async def stream(self, request: ModelRequest, sink: StreamSink) -> None:
        params = self.build_params(request)
        try:
            await self._stream_asking_for_usage(params, sink)
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            error = describe_status(
                "openai",
                exc.status_code,
                str(body.get("code") or body.get("type") or "") or None,
                str(body.get("message") or ""),
                self.base_url,
                self.model,
            )
            error.retry_after = retry_after_seconds(exc.response.headers)
            raise error from exc
        except (openai.APITimeoutError, httpx2.TimeoutException) as exc:
            raise connection_error("openai", self.base_url, exc, timed_out=True) from exc
        except (openai.APIConnectionError, httpx2.TransportError) as exc:
            raise connection_error("openai", self.base_url, exc, timed_out=False) from exc
        except openai.APIError as exc:  # an error object inside the stream
            body = exc.body if isinstance(exc.body, dict) else {}
            kind = str(body.get("code") or body.get("type") or "") or None
            raise describe_status("openai", None, kind, exc.message, self.base_url, self.model) from exc
        except openai.OpenAIError as exc:
            raise ModelError("bad_request", f"The openai API call failed: {exc}") from exc

    async def _stream_asking_for_usage(self, params: dict[str, Any], sink: StreamSink) -> None:
        """`_stream`; a server that refuses `stream_options` is asked again without it (nothing has streamed: the
        refusal is the response to the request), and never asked with it again."""
        try:
            await self._stream(params, sink)
        except openai.APIStatusError as exc:
            if "stream_options" not in params or not refuses_stream_options(exc):
                raise
            self._server.streams_usage_options = False
            log.info(
                "%s refuses stream_options (HTTP %s): asking without it, usage is estimated",
                self.base_url,
                exc.status_code,
            )
            await self._stream({k: v for k, v in params.items() if k != "stream_options"}, sink)

    async def _stream(self, params: dict[str, Any], sink: StreamSink) -> None:
        text: list[str] = []
        calls: dict[int, _Call] = {}
        finish: str | None = None
        usage = Usage()
        stream = await self._client.chat.completions.create(**cast(Any, params))
        async with stream:
            async for chunk in stream:
                if chunk.usage is not None:
                    details = chunk.usage.prompt_tokens_details
                    usage = Usage(
                        input_tokens=chunk.usage.prompt_tokens or 0,
                        output_tokens=chunk.usage.completion_tokens or 0,
                        cache_read_input_tokens=(details.cached_tokens or 0) if details else 0,
                    )
                for choice in chunk.choices[:1]:
                    delta = choice.delta
                    piece = delta.content or delta.refusal
                    if piece:
                        text.append(piece)
                        sink(TextArrived(piece))
                    for position, fragment in enumerate(delta.tool_calls or ()):
                        index = fragment.index if fragment.index is not None else len(calls) + position
                        call = calls.setdefault(index, _Call(id=""))
                        if fragment.id and not call.id:
                            call.id = fragment.id
                        if fragment.function is not None:
                            if fragment.function.name and not call.name:
                                call.name = fragment.function.name
                            call.arguments += fragment.function.arguments or ""
                        if call.id and call.name and not call.announced:
                            call.announced = True
                            sink(ToolUseStarted(call.id, call.name))
                    finish = choice.finish_reason or finish
        content: list[TextBlock | ToolUse] = []
        joined = "".join(text)
        if joined.strip():
            content.append(TextBlock(text=joined))
        malformed: dict[str, str] = {}
        seen: set[str] = set()
        for index in sorted(calls):
            call = calls[index]
            # Some compatible servers send no id, or the same id twice; the pairing rules need unique ids.
            if not call.id or call.id in seen:
                call.id = f"call_{uuid.uuid4().hex[:24]}"
            seen.add(call.id)
            value, problem = parse_tool_input(call.arguments, cut_off=finish == "length")
            content.append(ToolUse(id=call.id, name=call.name, input=value))
            if problem:
                malformed[call.id] = problem
        stop = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}.get(finish or "", finish)
        sink(ReplyCompleted(content=content, stop_reason=stop, usage=usage, malformed=malformed))
