"""The sidecar's wire protocol: every custom JSON-RPC method, its direction, and its params/result models.

toolgate's own fields are camelCase on the wire (the alias generator); the Anthropic message shapes the
protocol carries unchanged (tool_use, tool_result, tool definitions) keep their snake_case. Incoming params
are validated into these models; outgoing values are dumped from them as plain JSON objects. The JSON
Schema of this module (`toolgate protocol schema`) is what the extension's TypeScript types are generated
from, so this file is the single source of truth for both sides.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from toolgate.agent.call_summaries import CallSummary
from toolgate.agent.conversation import ChatMessage
from toolgate.agent.events import MIN_CONTEXT_WINDOW, ChatEvent, StopReason
from toolgate.agent.subagent_record import SubagentRun
from toolgate.agent.transcript import CompactionMark
from toolgate.core.decisions import Decision
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.permission import (
    ApprovalRequest,
    PermissionMode,
    ReviewedFile,
    ReviewNote,
    ReviewRequest,
    RuleScope,
)
from toolgate.core.todo_items import TodoItem
from toolgate.core.tool import ToolDefinition
from toolgate.sidecar.protocol_changes import CHANGES_METHODS
from toolgate.sidecar.protocol_checkpoints import (
    CheckpointFileParams,
    CheckpointFileResult,
    CheckpointsDiffParams,
    CheckpointsDiffResult,
    CheckpointsListResult,
    CheckpointsRestoreParams,
    CheckpointsRestoreResult,
)
from toolgate.sidecar.protocol_composer import COMPOSER_METHODS
from toolgate.sidecar.protocol_composer import Attachment as Attachment  # re-exported: chat/send carries it
from toolgate.sidecar.protocol_editor_intel import EDITOR_INTEL_METHODS
from toolgate.sidecar.protocol_hooks import HOOKS_METHODS
from toolgate.sidecar.protocol_mcp import MCP_METHODS
from toolgate.sidecar.protocol_problems import PROBLEMS_METHODS
from toolgate.sidecar.protocol_rules import PermissionCheckParams as PermissionCheckParams
from toolgate.sidecar.protocol_rules import PermissionCheckResult as PermissionCheckResult
from toolgate.sidecar.protocol_rules import RuleBehavior as RuleBehavior
from toolgate.sidecar.protocol_sandbox import SANDBOX_METHODS, SandboxStatus
from toolgate.sidecar.protocol_sandbox import SANDBOX_STAND_INS as SANDBOX_STAND_INS
from toolgate.sidecar.protocol_sandbox import StandInsParams as StandInsParams
from toolgate.sidecar.protocol_sessions import SESSIONS_METHODS
from toolgate.sidecar.wire_model import Direction as Direction
from toolgate.sidecar.wire_model import Method as Method
from toolgate.sidecar.wire_model import SessionId as SessionId  # re-exported: the protocol's names live here
from toolgate.sidecar.wire_model import WireModel as WireModel

PROTOCOL_VERSION = 1


ReviewEdits = Literal["when_asking", "always", "after"]


class Empty(WireModel):
    """No parameters, or no data in the result."""


# Generous: a person may step away from a pending approval; an editor that never answers still frees the session.
DEFAULT_EDITOR_ANSWER_TIMEOUT_SECONDS = 3600.0


class InitializationOptions(WireModel):
    """`initializationOptions` of the LSP initialize request. Unknown keys are ignored here: a failed
    initialize leaves the editor with no sidecar at all, which is worse than an ignored option."""

    model_config = ConfigDict(extra="ignore")

    storage_dir: str | None = Field(
        default=None,
        description="Where sessions live (the editor's storage directory); default: $XDG_DATA_HOME/toolgate.",
    )

    editor_answer_timeout_seconds: float = Field(
        default=DEFAULT_EDITOR_ANSWER_TIMEOUT_SECONDS,
        gt=0,
        le=7 * 24 * 3600,
        description=(
            'How long an approval or diff review waits for the editor\'s answer before it counts as "no" '
            "(the call does not run, and the session goes on); default: one hour."
        ),
    )

    editor_problems: bool = Field(
        default=False,
        description="The editor answers toolgate/editor/problems: its sessions get the Problems tool, and each edit's "
        "result ends with the problems it introduced.",
    )

    @field_validator("storage_dir")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isabs(value):
            raise ValueError(f"storageDir must be an absolute path, not {value!r}")
        return value


# --- tools -------------------------------------------------------------------------------------------------
class ToolsListParams(WireModel):
    session_id: SessionId | None = Field(
        default=None, description="Describe the tools as this session sees them (its mode and workspace)."
    )


class ToolsListResult(WireModel):
    tools: list[ToolDefinition] = Field(description="Built-in tools first (sorted), then external tools (sorted).")


class ToolsRunParams(WireModel):
    session_id: SessionId
    calls: list[ToolUse] = Field(description="One assistant turn's tool_use blocks, in the model's order.")


class ToolsRunResult(WireModel):
    results: list[ToolResult] = Field(description="Exactly one tool_result per call, in the calls' order.")


class ToolProgress(WireModel):
    """Live output from a running call (for example a command's output as it is produced)."""

    session_id: str
    tool_use_id: str
    kind: str
    text: str


# --- sessions ----------------------------------------------------------------------------------------------
class SessionInfo(WireModel):
    session_id: SessionId
    workspace: str
    mode: PermissionMode
    review_edits: ReviewEdits
    title: str
    created_at: datetime
    updated_at: datetime
    live: bool = Field(description="True when the session is open in this sidecar process.")
    turns: int = Field(default=0, description="How many prompts the person sent in it (its transcript's count).")


class SessionNewParams(WireModel):
    workspace: str | None = Field(
        default=None, description="Absolute path of the workspace; default: the first workspace folder."
    )
    mode: PermissionMode = PermissionMode.DEFAULT
    review_edits: ReviewEdits = "when_asking"
    title: str = ""


class SessionRef(WireModel):
    session_id: SessionId


class SessionListResult(WireModel):
    sessions: list[SessionInfo] = Field(description="Most recently updated first.")


# --- settings ----------------------------------------------------------------------------------------------


class RuleEntry(WireModel):
    rule: str
    behavior: RuleBehavior
    source: str = Field(description="Where it comes from: session, cli, local, project, user or flag (--settings).")
    file: str | None = Field(default=None, description="The settings file that holds it (none for session rules).")
    line: int | None = Field(default=None, description="Where the rule sits in `file`, 1-based.")
    column: int | None = None
    warning: str | None = Field(default=None, description="Set for rules that let the model run any code.")


class SettingsProblem(WireModel):
    """A settings file, rule or hook matcher that is not in force, and where it is."""

    file: str | None = Field(default=None, description="The settings file it is about (none: the command line).")
    line: int | None = Field(default=None, description="1-based; none: the file as a whole.")
    column: int | None = None
    rule: str | None = Field(default=None, description="The rule that could not be used, when it is one.")
    message: str = Field(description="The problem in words, as the command line prints it.")


class Settings(WireModel):
    session_id: str
    mode: PermissionMode
    review_edits: ReviewEdits = Field(
        description="when_asking: a diff is reviewed only when the edit needs approval; always: every edit; after: "
        "an edit that asks only because it changes files in the working directories applies at once and is "
        "reviewed after (the changes bar's Keep / Undo); other asks are still reviewed first."
    )
    rules: list[RuleEntry] = Field(default_factory=list, description="Every rule in force: deny, then ask, then allow.")
    settings_files: dict[str, str] = Field(
        default_factory=dict, description="Scope (local, project, user) → the settings file it is kept in."
    )
    flag_files: list[str] = Field(default_factory=list, description="The files given with --settings, read too.")
    problems: list[SettingsProblem] = Field(
        default_factory=list, description="Broken settings files, invalid rules and hook matchers: not in force."
    )
    sandbox: SandboxStatus | None = Field(default=None, description="The session's Bash sandbox.")


class PendingCall(WireModel):
    """A call waiting for approval, as the approval request named it."""

    tool: str
    input: dict[str, Any] = Field(default_factory=dict)


class RuleChangeParams(WireModel):
    session_id: SessionId
    rule: str = Field(min_length=1, description="e.g. Bash(git log:*), Edit(src/**), Read(./.env), WebFetch")
    behavior: RuleBehavior = "allow"
    scope: RuleScope = "session"
    call: PendingCall | None = Field(
        default=None, description="For an 'always allow' answer: the waiting call the rule was written for."
    )


class RuleChangeResult(WireModel):
    changed: bool = Field(description="False when the rule was already there (add) or not there (remove).")
    file: str | None = None
    warnings: list[str] = Field(default_factory=list)
    covers_call: bool | None = Field(
        default=None, description="With `call`: whether the rules in force now allow that call (an edit may not)."
    )
    settings: Settings


class SetModeParams(WireModel):
    session_id: SessionId
    mode: PermissionMode
    tool_use_id: str | None = Field(
        default=None, description="The waiting call (approval or diff review) the mode was changed to answer."
    )


class SetReviewEditsParams(WireModel):
    session_id: SessionId
    review_edits: ReviewEdits


# --- server → client: approvals and diff reviews ------------------------------------------------------------
class ApprovalParams(WireModel, ApprovalRequest):
    """The approval card on the wire: the runner's ApprovalRequest, camelCase."""


class ApprovalResult(WireModel):
    decision: Literal["allow", "deny"]
    feedback: str | None = Field(default=None, description="What the user said; passed on to the model.")


class DiffReviewParams(WireModel, ReviewRequest):
    """The diff review card on the wire: the runner's ReviewRequest, camelCase."""


class DiffReviewResult(WireModel):
    decision: Literal["accept", "reject"]
    files: list[ReviewedFile] | None = Field(
        default=None, description="The final contents the user accepted; absent: accepted as proposed."
    )
    feedback: str | None = None
    notes: list[ReviewNote] = Field(default_factory=list, description="Comments on lines of the proposals.")


# --- the model provider and chat ---------------------------------------------------------------------------------
ProviderName = Literal["anthropic", "openai"]


class ProviderConfigureParams(WireModel):
    """Which model the chat talks to. The key is kept in memory only (the sidecar never writes it to disk)."""

    provider: ProviderName = "anthropic"
    model: str | None = Field(default=None, description="None: the provider's default model.")
    base_url: str | None = Field(default=None, description="None: the SDK's default (its *_BASE_URL variable).")
    api_key: str | None = Field(default=None, description="None: the SDK reads ANTHROPIC_API_KEY / OPENAI_API_KEY.")
    max_tokens: int | None = Field(default=None, ge=1, description="None: the provider's default.")
    context_window: int | None = Field(
        default=None,
        ge=MIN_CONTEXT_WINDOW,
        description="The model's context window in tokens, for a model the catalogue does not know or to compact "
        "earlier (compaction starts at a share of it). None: the catalogue's window for the model.",
    )


class ProviderStatus(WireModel):
    provider: ProviderName
    model: str
    base_url: str | None
    has_key: bool = Field(description="A key was handed over, or the SDK's environment variable is set.")
    message: str = Field(description="What a person should know: ready, or what to configure.")


class ChatSendParams(WireModel):
    session_id: SessionId
    text: str = Field(min_length=1, description="The user's message.")
    attachments: list[Attachment] = Field(default_factory=list, description="What the person attached to it.")


class ChatSendResult(WireModel):
    stop_reason: StopReason = Field(description="Why the answer ended (end_turn, interrupted, error, ...).")


class ChatInterruptResult(WireModel):
    interrupted: bool = Field(description="False when no message was being answered.")


class ChatCompactParams(WireModel):
    session_id: SessionId
    focus: str | None = Field(default=None, description="What the summary should keep in view (`/compact focus`).")


class ChatCompactResult(WireModel):
    compacted: bool = Field(description="False when it could not be done (a compaction_failed event says why).")


class ChatHistoryResult(WireModel):
    messages: list[ChatMessage] = Field(
        description="The whole conversation as the transcript keeps it (Anthropic message shapes), summarised "
        "messages included: the compactions say which ones the model sees only through a summary."
    )
    todos: list[TodoItem]
    busy: bool = Field(description="A message is being answered right now.")
    decisions: list[Decision] = Field(
        default_factory=list, description="How each approval and diff review was answered, in the order answered."
    )
    calls: dict[str, CallSummary] = Field(
        default_factory=dict, description="By tool_use id: the one-line summaries its card showed live."
    )
    compactions: list[CompactionMark] = Field(
        default_factory=list, description="Where the conversation was summarised, in `messages`' terms, oldest first."
    )
    subagents: dict[str, SubagentRun] = Field(
        default_factory=dict,
        description="By Agent tool_use id: what its child agent did, to draw its card again. A run that never ended "
        "comes as interrupted unless it runs right now (its stop_reason is then null).",
    )


class ChatEventParams(WireModel):
    session_id: str
    event: ChatEvent


# --- the method table --------------------------------------------------------------------------------------
PING = "toolgate/ping"
TOOLS_LIST = "toolgate/tools/list"
TOOLS_RUN = "toolgate/tools/run"
TOOLS_PROGRESS = "toolgate/tools/progress"
SESSION_NEW = "toolgate/session/new"
SESSION_LIST = "toolgate/session/list"
SESSION_LOAD = "toolgate/session/load"
SESSION_DELETE = "toolgate/session/delete"
SETTINGS_GET = "toolgate/settings/get"
SETTINGS_SET_MODE = "toolgate/settings/setMode"
SETTINGS_SET_REVIEW_EDITS = "toolgate/settings/setReviewEdits"
SETTINGS_ADD_RULE = "toolgate/settings/addRule"
SETTINGS_REMOVE_RULE = "toolgate/settings/removeRule"
PERMISSIONS_CHECK = "toolgate/permissions/check"
PROVIDER_CONFIGURE = "toolgate/provider/configure"
PROVIDER_STATUS = "toolgate/provider/status"
CHAT_SEND = "toolgate/chat/send"
CHAT_INTERRUPT = "toolgate/chat/interrupt"
CHAT_HISTORY = "toolgate/chat/history"
CHAT_COMPACT = "toolgate/chat/compact"
CHAT_EVENT = "toolgate/chat/event"
APPROVAL_REQUEST = "toolgate/approval/request"
DIFF_REVIEW = "toolgate/diff/review"
CHECKPOINTS_LIST = "toolgate/checkpoints/list"
CHECKPOINTS_DIFF = "toolgate/checkpoints/diff"
CHECKPOINTS_RESTORE = "toolgate/checkpoints/restore"
CHECKPOINTS_FILE = "toolgate/checkpoints/file"

METHODS: tuple[Method, ...] = (
    Method(PING, "clientToServer", Empty, Empty, "Does nothing; for liveness checks and latency baselines."),
    Method(TOOLS_LIST, "clientToServer", ToolsListParams, ToolsListResult, "The tool definitions a model sees."),
    Method(TOOLS_RUN, "clientToServer", ToolsRunParams, ToolsRunResult, "Run one turn's tool calls."),
    Method(TOOLS_PROGRESS, "serverToClient", ToolProgress, None, "Live output from a running call."),
    Method(SESSION_NEW, "clientToServer", SessionNewParams, SessionInfo, "Start a session."),
    Method(SESSION_LIST, "clientToServer", Empty, SessionListResult, "Every session under the data root."),
    Method(SESSION_LOAD, "clientToServer", SessionRef, SessionInfo, "Open a saved session."),
    Method(SESSION_DELETE, "clientToServer", SessionRef, Empty, "Close a session and delete its files."),
    Method(SETTINGS_GET, "clientToServer", SessionRef, Settings, "A session's settings."),
    Method(SETTINGS_SET_MODE, "clientToServer", SetModeParams, Settings, "Change the permission mode."),
    Method(
        SETTINGS_SET_REVIEW_EDITS,
        "clientToServer",
        SetReviewEditsParams,
        Settings,
        "Review every edit, or only edits that need approval.",
    ),
    Method(SETTINGS_ADD_RULE, "clientToServer", RuleChangeParams, RuleChangeResult, "Add a permission rule."),
    Method(SETTINGS_REMOVE_RULE, "clientToServer", RuleChangeParams, RuleChangeResult, "Remove a permission rule."),
    Method(
        PERMISSIONS_CHECK,
        "clientToServer",
        PermissionCheckParams,
        PermissionCheckResult,
        "What the permission engine would decide for a call (runs nothing).",
    ),
    Method(
        PROVIDER_CONFIGURE, "clientToServer", ProviderConfigureParams, ProviderStatus, "Choose the model for chats."
    ),
    Method(PROVIDER_STATUS, "clientToServer", Empty, ProviderStatus, "Which model chats use, and whether it is ready."),
    Method(CHAT_SEND, "clientToServer", ChatSendParams, ChatSendResult, "Answer a user message (tools included)."),
    Method(CHAT_INTERRUPT, "clientToServer", SessionRef, ChatInterruptResult, "Stop the message being answered."),
    Method(CHAT_HISTORY, "clientToServer", SessionRef, ChatHistoryResult, "A session's conversation so far."),
    Method(CHAT_COMPACT, "clientToServer", ChatCompactParams, ChatCompactResult, "Summarise the older turns now."),
    Method(CHAT_EVENT, "serverToClient", ChatEventParams, None, "What a chat is doing, as it happens."),
    Method(APPROVAL_REQUEST, "serverToClient", ApprovalParams, ApprovalResult, "Ask the user to allow a call."),
    Method(DIFF_REVIEW, "serverToClient", DiffReviewParams, DiffReviewResult, "Show a proposed change for review."),
    Method(CHECKPOINTS_LIST, "clientToServer", SessionRef, CheckpointsListResult, "A session's checkpoints."),
    Method(CHECKPOINTS_DIFF, "clientToServer", CheckpointsDiffParams, CheckpointsDiffResult, "A restore's diff."),
    Method(CHECKPOINTS_FILE, "clientToServer", CheckpointFileParams, CheckpointFileResult, "A file at a checkpoint."),
    Method(
        CHECKPOINTS_RESTORE,
        "clientToServer",
        CheckpointsRestoreParams,
        CheckpointsRestoreResult,
        "Restore a checkpoint's files (a redo checkpoint is taken first).",
    ),
    *MCP_METHODS,
    *SANDBOX_METHODS,
    *HOOKS_METHODS,
    *SESSIONS_METHODS,
    *PROBLEMS_METHODS,
    *COMPOSER_METHODS,
    *EDITOR_INTEL_METHODS,
    *CHANGES_METHODS,
)
METHODS_BY_NAME = {m.name: m for m in METHODS}


class InvalidParams(ValueError):
    """Params that do not fit their model; `errors` names each bad field (camelCase, as sent)."""

    def __init__(self, method: str, errors: list[dict[str, str]]) -> None:
        listed = "; ".join(f"`{e['field']}`: {e['message']}" for e in errors)
        super().__init__(f"Invalid params for {method}: {listed}")
        self.method = method
        self.errors = errors


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(params)"


def parse_params(method: str, model: type[WireModel], raw: Any) -> WireModel:
    """Validate raw JSON params into `model`; missing params count as an empty object."""
    try:
        return model.from_wire({} if raw is None else raw)
    except ValidationError as exc:
        errors = [{"field": _field_path(tuple(e["loc"])), "message": e["msg"]} for e in exc.errors(include_url=False)]
        raise InvalidParams(method, errors) from None
