"""The hook events, what each one's hooks read on stdin, and what they may answer.

Every hook reads one JSON object on stdin with the fields every event has

    {"hook_event_name": EVENT, "event": EVENT, "session_id": ..., "cwd": ..., "transcript_path": ... | null,
     "permission_mode": ...}

plus its event's own fields (`EVENT_FIELDS`), and may print one JSON object on stdout (`HookOutput`):

    {"decision": ..., "reason": "...", "additional_context": "...", "updated_input": {...}}

Which decisions an event takes, and what exit status 2 means for it, are in `DECISIONS` and `EXIT_2`; a
decision the event does not take is reported and ignored. The matcher of a tool event is matched against the tool's
name; SessionStart's against its source, PreCompact's against its trigger, Notification's against its kind; the
other events have no matcher (a matcher there is ignored).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

HookEvent = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "PreCompact",
    "Stop",
    "SubagentStop",
    "SessionEnd",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
TOOL_EVENTS: frozenset[HookEvent] = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"})
# Events whose matcher is matched against something other than a tool's name (the rest: no matcher).
MATCHED_FIELD: dict[HookEvent, str] = {"SessionStart": "source", "PreCompact": "trigger", "Notification": "kind"}

Decision = Literal["allow", "deny", "ask", "block", "continue"]

DECISIONS: dict[HookEvent, frozenset[Decision]] = {
    "PreToolUse": frozenset({"allow", "deny", "ask"}),
    "PermissionRequest": frozenset({"allow", "deny"}),
    "UserPromptSubmit": frozenset({"block"}),
    "Stop": frozenset({"continue"}),
    "SubagentStop": frozenset({"continue"}),
}

# What exit status 2 means: the event's decision, with stderr as the reason; or stderr goes to the model as
# context (after a call); or to the person as a notice (events where nothing can be stopped).
Exit2 = Literal["deny", "block", "continue", "context", "notice"]
EXIT_2: dict[HookEvent, Exit2] = {
    "PreToolUse": "deny",
    "PermissionRequest": "deny",
    "UserPromptSubmit": "block",
    "Stop": "continue",
    "SubagentStop": "continue",
    "PostToolUse": "context",
    "PostToolUseFailure": "context",
}

# The fields each event adds to the common ones (documented in the README; a test checks them).
EVENT_FIELDS: dict[HookEvent, tuple[str, ...]] = {
    "SessionStart": ("source",),  # "new" | "resume" | "compact"
    "UserPromptSubmit": ("prompt",),
    "PreToolUse": ("tool_name", "tool_input", "tool_use_id"),
    "PermissionRequest": ("tool_name", "tool_input", "tool_use_id", "reason"),
    "PostToolUse": ("tool_name", "tool_input", "tool_use_id", "tool_result"),
    "PostToolUseFailure": ("tool_name", "tool_input", "tool_use_id", "error"),
    "Notification": ("kind", "message", "tool_name", "tool_use_id"),  # kind: "approval" | "review"
    "PreCompact": ("trigger",),  # "auto" | "manual"
    "Stop": ("stop_reason", "continuations"),
    "SubagentStop": ("stop_reason", "continuations"),
    "SessionEnd": ("reason",),
}


class HookOutput(BaseModel):
    """What a hook may print on stdout. Unknown keys are an error: a misspelt "decision" must not pass silently."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    decision: Decision | None = None
    reason: str | None = None
    updated_input: dict[str, Any] | None = None  # PreToolUse only
    additional_context: str | None = None
