"""Wire models of the changes bar (`CHANGES_METHODS`, joined into `protocol.METHODS`): the agent's changes of
the last turns per file and per hunk, and Keep / Undo of a hunk, a file or all of them (see
toolgate.checkpoints.changes)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from toolgate.checkpoints.models import UndoConflict
from toolgate.sidecar.wire_model import Method, SessionId, WireModel

CHANGES_LIST = "toolgate/changes/list"
CHANGES_KEEP = "toolgate/changes/keep"
CHANGES_UNDO = "toolgate/changes/undo"
CHANGES_WITHOUT = "toolgate/changes/without"


class HunkInfo(WireModel):
    """A run of lines the agent changed: lines `oldStart`… (0-based) of the file without the agent's change became
    lines `newStart`… of the file now. Each line keeps its ending. `before`/`after`: unchanged lines around it,
    by which an undo finds it again."""

    old_start: int = Field(ge=0)
    old_lines: list[str]
    new_start: int = Field(ge=0)
    new_lines: list[str]
    before: list[str]
    after: list[str]


class ChangedFileInfo(WireModel):
    path: str = Field(description="Relative to the workspace (absolute for an additional working directory).")
    status: Literal["created", "removed", "modified"]
    added: int
    removed: int
    hunks: list[HunkInfo] = Field(description="Empty for a binary file and for a conflict: undone whole or not at all.")
    conflict: str | None = Field(
        default=None,
        description="Why the agent's change cannot be taken out as the file is now: the person edited "
        "the same lines. Keep mine, take the undo (takeUndo), or merge by hand.",
    )
    version: str = Field(description="Names the file's content now; it changes when the file does.")


class ChangesListParams(WireModel):
    session_id: SessionId


class ChangesListResult(WireModel):
    enabled: bool
    reason: str | None = None  # why there is no bar (checkpoints off)
    since: str | None = None  # the checkpoint the bar counts from: the start of the first turn it covers
    files: list[ChangedFileInfo] = Field(default_factory=list)
    not_undoable: list[str] = Field(default_factory=list)  # changed by the agent where checkpoints could not follow


class ChangesKeepParams(WireModel):
    session_id: SessionId
    path: str
    hunk: HunkInfo | None = None  # None: the whole file


class ChangesUndoParams(WireModel):
    session_id: SessionId
    path: str | None = None  # None: every file in the bar (Undo all)
    hunk: HunkInfo | None = None  # one hunk of `path`
    take_undo: bool = False  # where the undo meets the person's edits, the undo wins (a conflict's "take the undo")


class ChangesUndoResult(WireModel):
    undone: bool
    reason: str | None = None  # why nothing (or not everything) was undone, and what to do
    redo: str | None = None  # restore this checkpoint (toolgate/checkpoints/restore) to take the undo back
    files: list[str] = Field(default_factory=list)
    conflicts: list[UndoConflict] = Field(default_factory=list)


class ChangesWithoutParams(WireModel):
    session_id: SessionId
    path: str


class ChangesWithoutResult(WireModel):
    """The file as it would be without the agent's changes the bar shows: the left side of its diff. For a conflict:
    the file as taking the undo would make it (the side a merge by hand starts from)."""

    exists: bool
    content: str
    binary: bool = False


CHANGES_METHODS: tuple[Method, ...] = (
    Method(CHANGES_LIST, "clientToServer", ChangesListParams, ChangesListResult, "The agent's changes, per file."),
    Method(CHANGES_KEEP, "clientToServer", ChangesKeepParams, ChangesListResult, "Accept a file or a hunk."),
    Method(
        CHANGES_UNDO,
        "clientToServer",
        ChangesUndoParams,
        ChangesUndoResult,
        "Undo the agent's change to a hunk, a file or every file (a redo checkpoint is taken first).",
    ),
    Method(
        CHANGES_WITHOUT, "clientToServer", ChangesWithoutParams, ChangesWithoutResult, "A file without the changes."
    ),
)
