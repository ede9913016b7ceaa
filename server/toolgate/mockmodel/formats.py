"""The two streaming wire formats, produced from a scripted step as a list of SSE frames.

`Stall` in a frame list marks where a `hang` step stops until the client goes away (or is released).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from toolgate.mockmodel.script import ANTHROPIC_ERROR_TYPES, OPENAI_ERROR_TYPES, ErrorSpec, Step


class Stall:
    """A point in the stream where a hanging step waits."""


Frame = bytes | Stall


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    cache_creation: int = 0
    cache_read: int = 0


def _arguments(step: Step, index: int) -> str:
    use = step.tool_uses[index]
    return use.raw_arguments if use.raw_arguments is not None else json.dumps(use.input, ensure_ascii=False)


def anthropic_error_body(error: ErrorSpec) -> dict[str, Any]:
    kind = error.type or ANTHROPIC_ERROR_TYPES.get(error.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def openai_error_body(error: ErrorSpec) -> dict[str, Any]:
    kind = error.type or OPENAI_ERROR_TYPES.get(error.status, "server_error")
    if kind == "context_length_exceeded":  # OpenAI's own shape: the type is generic, the code says which
        return {"error": {"message": error.message, "type": "invalid_request_error", "code": kind, "param": "messages"}}
    return {"error": {"message": error.message, "type": kind, "code": kind, "param": None}}


def unknown_parameter_refusal(status: Literal[400, 422], name: str, value: Any) -> dict[str, Any]:
    """The body a compatible server answers a request parameter it does not know with: at 400 an OpenAI-shaped
    error naming it, at 422 a pydantic validation error (FastAPI servers) listing it as an extra input."""
    if status == 400:
        message = f"Unrecognized request argument supplied: {name}"
        return {"error": {"message": message, "type": "invalid_request_error", "param": name, "code": None}}
    extra = {"type": "extra_forbidden", "loc": ["body", name], "msg": "Extra inputs are not permitted", "input": value}
    return {"detail": [extra]}


def anthropic_frames(step: Step, ids: list[str], model: str, usage: Usage) -> list[Frame]:
    frames: list[Frame] = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_mock_{time.monotonic_ns()}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage.input_tokens,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": usage.cache_creation,
                        "cache_read_input_tokens": usage.cache_read,
                    },
                },
            },
        ),
        _sse("ping", {"type": "ping"}),
    ]
    index = 0
    output = 0
    if step.text or step.hang or step.stream_error:
        frames.append(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
        )
        for piece in _pieces(step.text, step.chunk_chars):
            output += 1
            frames.append(
                _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
                )
            )
        if step.stream_error is not None:
            frames.append(_sse("error", anthropic_error_body(step.stream_error)))
            return frames
        if step.hang:
            frames.append(Stall())
        frames.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        index = 1
    for position, use_id in enumerate(ids):
        use = step.tool_uses[position]
        frames.append(
            _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": use_id, "name": use.name, "input": {}},
                },
            )
        )
        for piece in _pieces(_arguments(step, position), step.chunk_chars):
            output += 1
            frames.append(
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
            )
        frames.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    stop = step.stop_reason or ("tool_use" if ids else "end_turn")
    frames.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": output + 1},
            },
        )
    )
    frames.append(_sse("message_stop", {"type": "message_stop"}))
    return frames


def openai_frames(step: Step, ids: list[str], model: str, usage: Usage | None) -> list[Frame]:
    created = int(time.time())
    chunk_id = f"chatcmpl-mock-{time.monotonic_ns()}"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            None,
            {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
        )

    frames: list[Frame] = [chunk({"role": "assistant", "content": ""})]
    output = 0
    for piece in _pieces(step.text, step.chunk_chars):
        output += 1
        frames.append(chunk({"content": piece}))
    if step.stream_error is not None:
        frames.append(_sse(None, openai_error_body(step.stream_error)))
        return frames
    if step.hang:
        frames.append(Stall())
    for position, use_id in enumerate(ids):
        use = step.tool_uses[position]
        frames.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": position,
                            "id": use_id,
                            "type": "function",
                            "function": {"name": use.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in _pieces(_arguments(step, position), step.chunk_chars):
            output += 1
            frames.append(chunk({"tool_calls": [{"index": position, "function": {"arguments": piece}}]}))
    default = "tool_calls" if ids else "stop"
    finish = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}.get(
        step.stop_reason or "", step.stop_reason or default
    )
    frames.append(chunk({}, finish))
    if usage is not None:
        frames.append(
            _sse(
                None,
                {
                    "id": chunk_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": usage.input_tokens,
                        "completion_tokens": output + 1,
                        "total_tokens": usage.input_tokens + output + 1,
                        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
                    },
                },
            )
        )
    frames.append(b"data: [DONE]\n\n")
    return frames
