"""ToolSession: one conversation's worth of tool state (the stored session is `session_files.py`, the one
open in the editor `sidecar/editor_sessions.py`, the chat over it `agent/loop.py`).

Everything that must persist between tool calls lives here: the working directories, readFileState, the
permission policy and approver, the shell's working directory, and (through dependencies) the output
store and background tasks. One headless `run-tools` process is one session; the sidecar holds many.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolgate.core.decisions import Decisions
from toolgate.core.deps import Dependencies
from toolgate.core.file_state import ReadFileState
from toolgate.core.permission import Approver, PermissionMode, PermissionPolicy


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """Live output from a running call (for example a Bash command's output as it is produced)."""

    session_id: str
    tool_use_id: str
    kind: str
    text: str


# Diff review for calls that propose file changes: only when approval is needed, or always.
ReviewEdits = Literal["when_asking", "always", "after"]

# A listener returns True when it took the event for itself (so no other listener reports it again).
ProgressListener = Callable[[ProgressEvent], bool | None]


class ProgressListeners:
    """Who hears a session's live progress. The listener added last is asked first; one that returns True
    takes the event and the others do not hear it (a chat reports its own calls' output as chat events,
    the sidecar everything else as tools/progress). May be called from a worker thread."""

    def __init__(self, listeners: Sequence[ProgressListener] = ()) -> None:
        self._listeners: list[ProgressListener] = list(listeners)

    def add(self, listener: ProgressListener) -> Callable[[], None]:
        """Start listening; returns the function that stops it."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def emit(self, event: ProgressEvent) -> None:
        for listener in reversed(tuple(self._listeners)):
            if listener(event):
                return


@dataclass(eq=False)
class ToolSession:
    workspace: Path
    policy: PermissionPolicy
    approver: Approver
    # The one live home of the permission mode. meta.json and the settings' defaultMode only give its first
    # value (build_runtime); an open sidecar session changes it through EditorSession.set_mode.
    mode: PermissionMode = PermissionMode.DEFAULT
    additional_dirs: list[Path] = field(default_factory=list)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    data_dir: Path | None = None  # where session files live (output store, transcripts); None = temporary
    file_state: ReadFileState = field(default_factory=ReadFileState)
    deps: Dependencies = field(default_factory=Dependencies)
    logger: logging.Logger = field(default_factory=lambda: logging.getLogger("toolgate"))
    progress: ProgressListeners = field(default_factory=ProgressListeners)
    review_edits: ReviewEdits = "when_asking"
    # What the person answered, asked through `approver` and recorded here (the transcript listens).
    decisions: Decisions = field(default_factory=Decisions)
    cwd: Path = field(init=False)

    def __post_init__(self) -> None:
        self.workspace = Path(os.path.abspath(self.workspace))
        self.additional_dirs = [Path(os.path.abspath(d)) for d in self.additional_dirs]
        self.cwd = self.workspace

    @property
    def working_dirs(self) -> Sequence[Path]:
        """The workspace first, then directories added explicitly (`--add-dir`, settings, approvals)."""
        return [self.workspace, *self.additional_dirs]

    def add_working_dir(self, directory: Path) -> None:
        directory = Path(os.path.abspath(directory))
        if directory not in self.working_dirs:
            self.additional_dirs.append(directory)

    async def aclose(self) -> None:
        """End the session: close what its dependencies hold (background tasks, stores)."""
        await self.deps.aclose()
