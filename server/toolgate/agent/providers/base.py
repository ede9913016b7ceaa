"""The provider protocol: one streamed model reply for one request, in neutral terms.

A provider turns a `ModelRequest` (system prompt, sorted tool definitions, conversation) into its API's
request, streams the reply, and reports it through a sink as `StreamEvent`s: text as it arrives, tool calls
as they begin, and the complete reply at the end. It raises `ModelError` for every API failure, already
classified and worded for a person; retrying is the loop's business, not the provider's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from toolgate.agent.conversation import ChatMessage
from toolgate.agent.events import ErrorKindName, Usage
from toolgate.agent.model_catalog import MIN_CONTEXT_WINDOW, ModelInfo, Prices
from toolgate.core.messages import TextBlock, ToolUse
from toolgate.core.tool import ToolDefinition

ProviderName = Literal["anthropic", "openai"]


# The model each provider uses when none is configured. Kept here, not in the provider modules, so that
# naming it does not import an SDK (importing one takes seconds).
DEFAULT_MODELS: dict[ProviderName, str] = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.6-terra"}


class ModelConfig(BaseModel):
    """Which model to talk to. The key is never written anywhere (`exclude=True`, and `SecretStr` in reprs)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    provider: ProviderName = "anthropic"
    model: str | None = None  # None: the provider's default
    base_url: str | None = None  # None: the SDK's default (ANTHROPIC_BASE_URL / OPENAI_BASE_URL, else official)
    api_key: SecretStr | None = Field(default=None, exclude=True)  # None: the SDK reads its environment variable
    max_tokens: int = 16_384
    timeout_seconds: float = 600.0
    # None: the model catalogue's (model_catalog.py). Set: the window compaction's threshold is measured against.
    context_window: int | None = Field(default=None, ge=MIN_CONTEXT_WINDOW)
    prices: Prices | None = None  # None: the model catalogue's


class ModelRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    system: str
    tools: list[ToolDefinition]
    messages: list[ChatMessage]
    max_tokens: int


@dataclass(frozen=True, slots=True)
class TextArrived:
    text: str


@dataclass(frozen=True, slots=True)
class ToolUseStarted:
    """The model began writing a tool call (its input is still streaming)."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ReplyCompleted:
    """The whole reply. Blocks are reported only here, once complete, so an interrupted reply has none.

    `malformed` maps a tool_use id to why its input is unusable (such a call must not run).
    `stop_reason` is the API's own word; the loop decides from the content, not from it alone.
    """

    content: list[TextBlock | ToolUse]
    stop_reason: str | None
    usage: Usage
    malformed: dict[str, str] = field(default_factory=dict)


StreamEvent = TextArrived | ToolUseStarted | ReplyCompleted
StreamSink = Callable[[StreamEvent], None]


class ModelError(Exception):
    """A failed model request, classified. `message` is for a person; `retryable` drives the backoff."""

    RETRYABLE: frozenset[str] = frozenset({"rate_limit", "overloaded", "server", "connection"})

    def __init__(
        self, kind: ErrorKindName, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKindName = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in self.RETRYABLE


class Provider(Protocol):
    name: ProviderName
    model: str
    base_url: str
    max_tokens: int  # the output limit per reply, from the config
    info: ModelInfo  # its context window and prices (the catalogue's, or the config's where it sets them)

    async def stream(self, request: ModelRequest, sink: StreamSink) -> None:
        """Send one request and report its reply to `sink`, ending with exactly one `ReplyCompleted`."""
        ...

    async def aclose(self) -> None: ...


def parse_tool_input(raw: str, *, cut_off: bool) -> tuple[Any, str | None]:
    """A streamed tool call's arguments, parsed strictly. Returns (input, why it is unusable or None).

    A partial parse is never used: a truncated `content` argument would write half a file.
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        if cut_off:
            return raw, (
                "Your reply was cut off at the output token limit while you were writing this call's arguments, "
                "so it was not run. Send it again with less input in one call (for example, write a large file "
                "in several steps)."
            )
        return raw, f"The arguments of this call are not valid JSON ({exc.msg} at position {exc.pos}); it was not run."
    if not isinstance(value, dict):
        return value, f"The arguments of this call must be a JSON object, not {type(value).__name__}; it was not run."
    return value, None


# Words the APIs use when a request does not fit the model's context window.
_CONTEXT_WORDS = (
    "prompt is too long",
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "context_length_exceeded",
    "input is too long",
)


def looks_like_context_overflow(text: str) -> bool:
    lowered = text.lower()
    return any(w in lowered for w in _CONTEXT_WORDS)


def describe_status(
    provider: str, status: int | None, api_type: str | None, api_message: str, base_url: str, model: str
) -> ModelError:
    """Classify an HTTP error (or, with `status` None, an error event inside a stream) and say what to do."""
    detail = f" The API said: {api_message.strip()}" if api_message.strip() else ""
    key_var = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
    code = status or 0
    where = f"HTTP {status}" if status else "an error in the middle of the reply"
    kind: ErrorKindName
    if code == 429 or api_type in ("rate_limit_error", "rate_limit_exceeded"):
        kind, text = "rate_limit", f"The {provider} API is rate-limiting requests ({where})."
    elif code == 529 or api_type == "overloaded_error":
        kind, text = "overloaded", f"The {provider} API is overloaded right now ({where})."
    elif code == 401 or api_type in ("authentication_error", "invalid_api_key"):
        kind = "auth"
        text = (
            f"The {provider} API rejected the API key ({where}). Set {key_var} (or the key in the editor's "
            "settings) to a valid key."
        )
    elif code == 403 or api_type == "permission_error":
        kind = "auth"
        text = f"The API key may not use {model} at {base_url} ({where}). Check the key's permissions."
    elif code == 413 or api_type == "request_too_large" or looks_like_context_overflow(f"{api_type} {api_message}"):
        kind = "context_too_long"
        text = (
            "The conversation no longer fits the model's context window, even compacted and with older tool outputs "
            "cleared. Start a new session, and begin it with a short summary of where this one stopped."
        )
    elif code == 404 or api_type == "not_found_error":
        kind = "not_found"
        text = f"{base_url} has no model {model!r} ({where}). Check the model name and the base URL."
    elif code >= 500 or code == 408 or api_type in ("api_error", "server_error", "timeout_error"):
        kind, text = "server", f"The {provider} API failed on its side ({where})."
    else:
        kind, text = "bad_request", f"The {provider} API refused the request ({where})."
    return ModelError(kind, text + detail, status=status)


def connection_error(provider: str, base_url: str, exc: BaseException, timed_out: bool) -> ModelError:
    what = "did not answer in time" if timed_out else "could not be reached"
    cause = f" ({exc.__cause__ or exc})" if not timed_out else ""
    return ModelError(
        "connection",
        f"The {provider} API at {base_url} {what}{cause}. Check the network and the base URL.",
    )


def retry_after_seconds(headers: Any) -> float | None:
    """`retry-after-ms` or `retry-after` (seconds) from a response's headers, if present and sane."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name) if headers is not None else None
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except (TypeError, ValueError):
            continue
        if 0 <= value <= 600:
            return value
    return None
