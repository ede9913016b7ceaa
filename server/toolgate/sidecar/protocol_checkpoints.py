"""Wire models of toolgate/checkpoints/list|diff|restore (the methods themselves are listed in `protocol.py`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from toolgate.checkpoints.models import CheckpointKind, FileChange, SkippedFile
from toolgate.sidecar.wire_model import SessionId, WireModel


class CheckpointInfo(WireModel):
    """One checkpoint; `changed`: files changed since the session's previous one; `skipped`: not captured."""

    id: str
    turn: int
    tool_use_id: str | None
    kind: CheckpointKind
    time: str
    changed: list[str]
    skipped: list[SkippedFile]
    note: str | None = None
    conversation: bool = False  # it marks a point of the conversation (turn and redo checkpoints)


class TurnInfo(WireModel):
    """One turn: `start` is its turn checkpoint (Restore… on its prompt), `start` → `end` its diff, `changed`
    the files it changed (Bash's too). `prompt`: which user message of the chat history it belongs to (0 = the
    first prompt, counting user messages that carry text); None when that point was cut away since."""

    turn: int
    start: str
    end: str
    prompt: int | None
    changed: list[str]


class CheckpointsListResult(WireModel):
    enabled: bool
    reason: str | None = None  # why checkpoints are off for this session
    checkpoints: list[CheckpointInfo]
    turns: list[TurnInfo] = Field(default_factory=list)


class CheckpointRef(WireModel):
    session_id: SessionId
    checkpoint_id: str = Field(pattern=r"^[0-9]{6,}$")


class CheckpointsDiffParams(CheckpointRef):
    # None: what restoring `checkpoint_id` would do to the files now; a checkpoint: from `checkpoint_id` to it
    # (a turn's diff: its start to its end)
    to: str | None = Field(default=None, pattern=r"^[0-9]{6,}$")


class CheckpointFileParams(CheckpointRef):
    path: str  # relative to the workspace, as in `files`


class CheckpointFileResult(WireModel):
    exists: bool  # False: there was no such file at the checkpoint
    content: str  # the text (empty when binary or absent)
    binary: bool = False


class CheckpointsDiffResult(WireModel):
    files: list[FileChange]  # what restoring the checkpoint's files would do
    diff: str  # unified, from the files now to the checkpoint's
    # Of those files, the ones with unsaved changes in the editor: a restore would refuse them, so the editor says
    # so before asking (empty for a turn's diff, which restores nothing)
    unsaved: list[str] = Field(default_factory=list)


class CheckpointsRestoreParams(CheckpointRef):
    what: Literal["code", "conversation", "both"] = "code"


class CheckpointsRestoreResult(WireModel):
    restored: bool
    reason: str | None = None  # why nothing was restored; or, restored, the files an undo left as they are
    redo: str | None = None  # the checkpoint taken just before: restore it to undo this one
    files: list[FileChange] = Field(default_factory=list)
    conversation_restored: bool = False  # the transcript was cut back: fetch the chat history again
    entries_removed: int | None = None  # how many transcript entries the conversation lost
