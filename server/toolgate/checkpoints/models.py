"""What a checkpoint is, as stored in its commit and as shown on the wire and in `toolgate checkpoints list`."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CheckpointKind = Literal["turn", "tool", "restore"]
ChangeAction = Literal["write", "remove", "link"]
RestoreWhat = Literal["code", "conversation", "both"]
SkipReason = Literal["too_large", "unreadable", "not_a_file", "vanished"]


class CheckpointError(Exception):
    """A checkpoint or a restore could not be made; the message says why and what to do."""


class SkippedFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    reason: SkipReason
    size: int | None = None


class ConversationMark(BaseModel):
    """Where the session's transcript stood at a checkpoint: its first `size` bytes, which hash to `sha256`
    (the transcript is only ever appended to, so that prefix is the conversation then). `blob`: the whole
    transcript kept in the store, set on the redo checkpoint of a restore that cut the conversation."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    size: int
    sha256: str
    blob: str | None = None


class Checkpoint(BaseModel):
    """One checkpoint. Kept as one line of JSON in its commit's message, so a list needs no other file."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    id: str
    session: str
    turn: int
    tool_use_id: str | None = None
    kind: CheckpointKind = "tool"
    time: dt.datetime
    changed: list[str] = Field(default_factory=list)  # files changed since the session's previous checkpoint
    skipped: list[SkippedFile] = Field(default_factory=list)
    note: str | None = None  # e.g. "before restoring to 000004"
    conversation: ConversationMark | None = None  # turn and restore checkpoints of a session with a transcript
    roots: dict[str, str] = Field(default_factory=dict)  # each additional working directory's tree, by its path
    # Set on the checkpoint taken right after a tool call (or its hooks): the checkpoint taken right before it.
    # What changed between the two is the agent's; anything else (the person's edits between calls, rules
    # toolgate saved for them) is not.
    agent_since: str | None = None
    commit: str = ""  # filled from the ref when read back; not stored in the message
    tree: str = ""  # the commit's tree, likewise

    def summary(self) -> dict[str, object]:
        """The JSON line `toolgate checkpoints list` prints."""
        return self.model_dump(mode="json", exclude={"commit", "tree", "session"})


class FileChange(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    action: ChangeAction


class UndoConflict(BaseModel):
    """A file whose agent change the person has since edited on the same lines (or replaced, or removed):
    an undo leaves it as it is."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    reason: str


class RestoreReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    target: str
    redo: str | None  # the checkpoint taken just before, to undo this restore; None for a dry run
    changes: list[FileChange]
    diff: str = ""  # a unified diff of what the restore does (dry runs)
    dry_run: bool = False
    what: RestoreWhat = "code"
    entries_removed: int | None = None  # transcript entries the conversation lost (conversation, both)
    # An undo of the agent's changes (not a whole-tree restore): files left untouched because the person
    # changed the same lines since, and files the agent changed that checkpoints did not capture.
    conflicts: list[UndoConflict] = Field(default_factory=list)
    not_undoable: list[str] = Field(default_factory=list)
