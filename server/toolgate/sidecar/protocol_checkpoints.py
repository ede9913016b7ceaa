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


class CheckpointsListResult(WireModel):
    enabled: bool
    reason: str | None = None  # why checkpoints are off for this session
    checkpoints: list[CheckpointInfo]


class CheckpointRef(WireModel):
    session_id: SessionId
    checkpoint_id: str = Field(pattern=r"^[0-9]{6,}$")


class CheckpointsDiffResult(WireModel):
    files: list[FileChange]  # what restoring the checkpoint's files would do
    diff: str  # unified, from the files now to the checkpoint's


class CheckpointsRestoreParams(CheckpointRef):
    what: Literal["code", "conversation", "both"] = "code"


class CheckpointsRestoreResult(WireModel):
    restored: bool
    reason: str | None = None  # why nothing was restored
    redo: str | None = None  # the checkpoint taken just before: restore it to undo this one
    files: list[FileChange] = Field(default_factory=list)
    conversation_restored: bool = False  # the transcript was cut back: fetch the chat history again
    entries_removed: int | None = None  # how many transcript entries the conversation lost
