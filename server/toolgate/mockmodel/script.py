"""What the mock model says: a list of steps, one consumed per accepted request.

A script file is JSON: `{"steps": [...]}` or just the list. A step is a reply (text and/or tool calls), an
HTTP error, a reply broken by an error event in the middle, or a reply that stalls until the client goes away.
`"no_tools": {...}` answers every request that offers no tools (a compaction's summary request) without using
a step, and `"context_window": N` refuses requests over N tokens the way the APIs do (server.py).
`{"steps": [...], "after_last": {...}}` answers every request after the last step with that one step (a demo
that is over can say so); without it such a request gets a 400 saying the script is used up.

    {"text": "Reading it.", "tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}
    {"error": {"status": 529}}
    {"text": "Partly", "stream_error": {"status": 529}}
    {"text": "Thinking...", "hang": true}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

# The error type each API reports for a status (the mock picks the one for the API it is speaking).
ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    403: "permission_denied",
    404: "model_not_found",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
}


class ErrorSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    status: int = 500
    type: str | None = None  # None: the usual type for the status in the API being spoken
    message: str = "scripted error"
    retry_after: float | None = None  # sent as a retry-after header (seconds)


class ScriptedToolUse(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str | None = None  # None: generated
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = None  # send exactly this as the arguments (to script malformed JSON)


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    text: str = ""
    tool_uses: list[ScriptedToolUse] = Field(default_factory=list)
    stop_reason: str | None = None  # None: tool_use when there are tool calls, else end_turn
    error: ErrorSpec | None = None  # answer with this HTTP error instead of a reply
    stream_error: ErrorSpec | None = None  # send the text, then this error inside the stream
    hang: bool = False  # send the text, then stall until the client disconnects or `release()`
    chunk_chars: int = Field(default=8, ge=1)  # how finely text and arguments are split into deltas
    delay: float = Field(default=0.0, ge=0)  # seconds between deltas


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    steps: list[Step] = Field(default_factory=list)
    after_last: Step | None = None  # the reply to every request once the steps are used up (None: a 400)
    # The reply to every request that offers no tools (a compaction's summary request), consuming no step.
    # None: such a request takes the next step like any other.
    no_tools: Step | None = None
    # Refuse a request whose estimated size (text.tokens.estimate_tokens of the request body, 4 bytes a token)
    # is over this, with each API's own "too long" error. None: no limit.
    context_window: int | None = Field(default=None, ge=1)
    # A request whose system prompt contains a lane's key takes that lane's next step instead (a subagent's
    # requests, told apart from its parent's by the marker in its system prompt). First matching key wins.
    lanes: dict[str, list[Step]] = Field(default_factory=dict)
    # False: like an OpenAI-compatible server that streams no usage even when asked (`stream_options`).
    reports_usage: bool = True
    # Like an OpenAI-compatible server that does not know `stream_options`: a request that carries it is refused,
    # consuming no step, with 400 (an OpenAI-shaped error naming the parameter) or 422 (a validation error listing
    # it as an extra field). None: it is accepted.
    refuses_stream_options: Literal[400, 422] | None = None
    # What GET /v1/models lists (either API's shape), so a model picker has something to offer.
    models: list[str] = Field(default_factory=lambda: ["mock-model", "mock-model-large"])


_STEPS: TypeAdapter[list[Step]] = TypeAdapter(list[Step], config=ConfigDict(defer_build=True))


def load_script(value: Script | list[Step] | list[dict[str, Any]] | dict[str, Any] | str | Path) -> Script:
    """A script from an object, a list of steps, JSON text, or a JSON file."""
    if isinstance(value, Script):
        return value
    if isinstance(value, Path):
        value = json.loads(value.read_text(encoding="utf-8"))
    elif isinstance(value, str):
        value = json.loads(value)
    if isinstance(value, list):
        return Script(steps=_STEPS.validate_python(value))
    return Script.model_validate(value)
