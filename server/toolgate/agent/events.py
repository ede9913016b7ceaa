"""What a chat session reports while it works: typed events, one JSON object each.

The sidecar forwards each one as a `toolgate/chat/event` notification (`{sessionId, event}`), and
`toolgate chat --output-format stream-json` prints one per line. `type` tells them apart.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from toolgate.agent.conversation import ChatMessage
from toolgate.core.messages import ToolResult
from toolgate.core.todo_items import TodoItem

StopReason = Literal["end_turn", "max_tokens", "max_turns", "interrupted", "error", "prompt_blocked"]
"""Why `send` returned: the model asked for no tool; its reply was cut off at the token limit; the max-turns
guard stopped the loop; the user interrupted; the model API failed (an `error` event says how); a
UserPromptSubmit hook blocked the prompt before the model saw it (a `hook` event names the hook and its reason)."""

ErrorKindName = Literal[
    "rate_limit", "overloaded", "server", "connection", "auth", "context_too_long", "bad_request", "not_found", "config"
]


# The smallest context window a setting may give: below it the system prompt and the tool definitions alone fill
# the window, and no summary could make room. Here, not in model_catalog (whose table is built on import), because
# the wire protocol validates the setting with it.
MIN_CONTEXT_WINDOW = 1_000


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def add(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class RequestStarted(_Event):
    """A model request is being sent (request number `request` of this `send`)."""

    type: Literal["request_started"] = "request_started"
    request: int


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str


class MessageAdded(_Event):
    """A whole message joined the conversation (the assistant's reply, or the tool results sent back)."""

    type: Literal["message"] = "message"
    message: ChatMessage


class ToolCallStarted(_Event):
    type: Literal["tool_call_started"] = "tool_call_started"
    tool_use_id: str
    name: str
    input: Any
    summary: str


class ToolCallProgress(_Event):
    type: Literal["tool_call_progress"] = "tool_call_progress"
    tool_use_id: str
    kind: str
    text: str


class ToolCallFinished(_Event):
    type: Literal["tool_call_finished"] = "tool_call_finished"
    tool_use_id: str
    name: str
    is_error: bool
    summary: str  # the result's first line, shortened
    result: ToolResult


class TodoUpdate(_Event):
    type: Literal["todo_update"] = "todo_update"
    todos: list[TodoItem]


class Retrying(_Event):
    """A transient API failure; the request is sent again after `delay_seconds`.

    `discard_partial`: text already streamed for this reply is void (the reply starts over).
    """

    type: Literal["retrying"] = "retrying"
    attempt: int
    max_attempts: int
    delay_seconds: float
    kind: ErrorKindName
    message: str
    discard_partial: bool


class ContextCleared(_Event):
    """The request did not fit the context window: the outputs of `cleared` older tool calls were cleared (see
    `context_relief`) and the request is sent again."""

    type: Literal["context_cleared"] = "context_cleared"
    cleared: int
    message: str


class HookReport(_Event):
    """A hook of the session's lifecycle had a say the person should see: it blocked the prompt, asked the model to
    continue (or was refused that, past the bound), failed, or left a notice. `message` names the hook."""

    type: Literal["hook"] = "hook"
    event: str  # the hook event (UserPromptSubmit, Stop, ...)
    outcome: Literal["blocked", "continued", "limit", "problem", "notice"]
    message: str


class Compacted(_Event):
    """The older part of the conversation was replaced by a summary (agent/compaction.py): `summarised` messages
    went, `kept` recent ones stayed verbatim. Token counts are estimates of the conversation's size."""

    type: Literal["compacted"] = "compacted"
    trigger: Literal["auto", "overflow", "manual"]
    summarised: int
    kept: int
    tokens_before: int
    tokens_after: int
    seconds: float
    summary: str
    reattached: list[str]  # files read again and attached after the summary
    forgotten: list[str]  # files that must be read again before an edit
    summary_usage: Usage
    # The first call of the first message kept verbatim: what a view of the conversation marks as summarised is
    # everything before that reply. None when that reply made no call (the view then learns it from the history).
    kept_from_tool_use_id: str | None = None


class CompactionFailed(_Event):
    type: Literal["compaction_failed"] = "compaction_failed"
    trigger: Literal["auto", "overflow", "manual"]
    message: str


class UsageReport(_Event):
    """After each model request: what it used, how full the context window was, and what it cost (None: the
    model's price is unknown), with the session's totals (this process's requests, summaries included)."""

    type: Literal["usage"] = "usage"
    usage: Usage
    context_tokens: int
    # True: the API reported no usage, and `context_tokens` is toolgate's estimate of the request (4 characters a
    # token); the cost is then unknown.
    context_estimated: bool = False
    context_window: int
    cost_usd: float | None
    total_usage: Usage
    total_cost_usd: float | None


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    kind: ErrorKindName
    message: str


class SubagentEvent(_Event):
    """An event of a child agent (the Agent tool), as the child emitted it. `task_id` is the parent's Agent
    tool_use id, so a child's calls can be drawn inside that call's card; a grandchild's events arrive wrapped
    twice."""

    type: Literal["subagent"] = "subagent"
    task_id: str
    agent_type: str
    event: dict[str, Any]


class TurnEnd(_Event):
    type: Literal["turn_end"] = "turn_end"
    stop_reason: StopReason
    requests: int
    usage: Usage


ChatEvent = Annotated[
    RequestStarted
    | TextDelta
    | MessageAdded
    | ToolCallStarted
    | ToolCallProgress
    | ToolCallFinished
    | TodoUpdate
    | Retrying
    | ContextCleared
    | HookReport
    | Compacted
    | CompactionFailed
    | UsageReport
    | ErrorEvent
    | SubagentEvent
    | TurnEnd,
    Field(discriminator="type"),
]
CHAT_EVENT: TypeAdapter[ChatEvent] = TypeAdapter(ChatEvent, config=ConfigDict(defer_build=True))
