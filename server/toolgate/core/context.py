"""ToolContext: what one call sees of its session, plus what belongs to the call alone."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from toolgate.core.clock import Clock, SystemClock
from toolgate.core.deps import CallDependencies, Dep
from toolgate.core.file_state import ReadFileState
from toolgate.core.messages import ToolResultContent
from toolgate.core.paths import expand_path, real_path
from toolgate.core.permission import Grounds, PermissionMode
from toolgate.core.tool_session import ProgressEvent, ToolSession

T = TypeVar("T")

CLOCK: Dep[Clock] = Dep("clock", lambda _r: SystemClock())
HOME_DIR: Dep[Path] = Dep("home_dir", lambda _r: Path.home())

ContextChange = Callable[[ToolSession], None]


@dataclass(frozen=True, slots=True)
class ReviewedContent:
    """The final text of a file after a human reviewed (and maybe edited) a proposed change."""

    path: Path
    content: str | None  # None: the file is deleted
    proposed: str | None  # what the tool had proposed, so the tool can tell the model what the user changed
    user_modified: bool
    original: str | None = None  # the file as the proposal started from (None: a new file)
    skipped: bool = False  # the person left this file as it is: not created, changed or deleted


@dataclass(eq=False)
class ToolContext:
    session: ToolSession
    tool_use_id: str
    deps: CallDependencies
    logger: logging.Logger
    # Changes to session state this call wants made. The orchestrator applies them in tool_use order:
    # right after a call that runs alone, after the whole batch for concurrent calls.
    changes: list[ContextChange] = field(default_factory=list)
    # What a cancelled call had produced so far; used instead of the generic "cancelled" result.
    partial_result: ToolResultContent | None = None
    # Set when a human reviewed this call's proposed file contents (the diff review).
    reviewed: list[ReviewedContent] | None = None
    review_notes: str = ""  # the person's comments on the reviewed proposal, for the end of the result
    # Why this call was allowed to run (set by the runner after the permission step; None: not decided there).
    # Through the call, not the session: concurrent calls were allowed for different reasons.
    allowed_because: Grounds | None = None
    # Each of the call's paths (`Tool.paths`) with its real path as the permission decision saw it (the runner
    # pins them right before deciding). The file tools read and write exactly there, or refuse: a folder swapped
    # for a symbolic link while the person reviewed must not carry the approved call outside what was approved.
    pinned: dict[Path, str] = field(default_factory=dict)

    # --- conveniences over the session -------------------------------------------------------------
    def get(self, dep: Dep[T]) -> T:
        return self.deps.get(dep)

    @property
    def clock(self) -> Clock:
        return self.deps.get(CLOCK)

    @property
    def file_state(self) -> ReadFileState:
        return self.session.file_state

    @property
    def workspace(self) -> Path:
        return self.session.workspace

    @property
    def working_dirs(self) -> Sequence[Path]:
        return self.session.working_dirs

    @property
    def mode(self) -> PermissionMode:
        return self.session.mode

    def resolve_path(self, raw: str) -> Path:
        """A model-given path made absolute: relative to the workspace, `~` to the home directory."""
        return expand_path(raw, self.session.workspace, self.deps.get(HOME_DIR))

    def pin_paths(self, paths: Sequence[Path]) -> None:
        """Record where each of `paths` really is now (one O_PATH open and a readlink each), replacing any pins."""
        self.pinned = {path: real_path(path) for path in paths}

    def commit(self, change: ContextChange) -> None:
        self.changes.append(change)

    def progress(self, kind: str, text: str) -> None:
        self.session.progress.emit(ProgressEvent(self.session.id, self.tool_use_id, kind, text))
