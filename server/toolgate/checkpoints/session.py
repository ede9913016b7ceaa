"""One session's checkpoints, as the runtime uses them: a checkpoint at each turn start and before each call
that may change files, and restores that tell the session which files changed under it.

The store is opened on first use. If it cannot be (no git, an unwritable data dir), checkpoints are off for the
session with that reason, and every call that may change files still runs, with a warning in its result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import anyio

from toolgate.checkpoints.models import Checkpoint, CheckpointError, RestoreReport
from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.settings import CheckpointSettings
from toolgate.checkpoints.store import CheckpointStore

CANNOT_REWIND = "this change cannot be rewound"


class SessionCheckpoints:
    def __init__(
        self, data_root: Path, workspace: Path, session_id: str, settings: CheckpointSettings | None = None
    ) -> None:
        self.data_root = data_root
        self.workspace = workspace
        self.session_id = session_id
        self.settings = settings or CheckpointSettings()
        self.turn = 0
        self._store: CheckpointStore | None = None
        self._off_reason: str | None = None if self.settings.enabled else "checkpoints are turned off in settings"
        self._lock = threading.Lock()

    @property
    def off_reason(self) -> str | None:
        """Why this session has no checkpoints, or None when it has them (as far as is known yet)."""
        return self._off_reason

    def store(self) -> CheckpointStore:
        with self._lock:
            if self._off_reason is not None:
                raise CheckpointError(self._off_reason)
            if self._store is None:
                try:
                    self._store = CheckpointStore(self.data_root, self.workspace, self.settings)
                except CheckpointError as exc:
                    self._off_reason = str(exc)
                    raise
            return self._store

    def _create(self, tool_use_id: str | None, kind: str) -> Checkpoint:
        store = self.store()
        if kind == "turn":
            return store.create(self.session_id, turn=self.turn, kind="turn")
        return store.create(self.session_id, turn=self.turn, tool_use_id=tool_use_id)

    async def begin_turn(self) -> str | None:
        """A new turn (a user message, a run-tools input line): its checkpoint. Returns a warning or None."""
        self.turn += 1
        try:
            await anyio.to_thread.run_sync(self._create, None, "turn")
        except CheckpointError as exc:
            return f"no checkpoint was taken at the start of this turn: {exc}"
        return None

    async def before_change(self, tool_use_id: str) -> str | None:
        """Right before a call that may change files. Returns the warning its result must carry, or None."""
        try:
            await anyio.to_thread.run_sync(self._create, tool_use_id, "tool")
        except CheckpointError as exc:
            return f"{CANNOT_REWIND}: {exc}"
        return None

    def checkpoints(self) -> list[Checkpoint]:
        return self.store().checkpoints(self.session_id)

    def restore(
        self, target: str, *, dry_run: bool = False, is_dirty: Callable[[Path], bool] = lambda _p: False
    ) -> tuple[RestoreReport, list[Path]]:
        """Restore the files of `target`; also returns the absolute paths it touched (their readFileState must
        be dropped)."""
        report = restore(self.store(), self.session_id, target, turn=self.turn, dry_run=dry_run, is_dirty=is_dirty)
        touched = [self.workspace / change.path for change in report.changes]
        return report, touched
