"""One session's checkpoints, as the runtime uses them: a checkpoint at each turn start and before each call
that may change files, and restores that tell the session which files changed under it.

The store is opened on first use. If it cannot be (no git, an unwritable data dir), checkpoints are off for the
session with that reason, and every call that may change files still runs, with a warning in its result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import anyio

from toolgate.checkpoints.conversation import mark_of, read_transcript
from toolgate.checkpoints.models import Checkpoint, CheckpointError, RestoreReport, RestoreWhat
from toolgate.checkpoints.rewind import rewind
from toolgate.checkpoints.settings import CheckpointSettings
from toolgate.checkpoints.store import CheckpointStore
from toolgate.core.change_guard import CHANGE_GUARD
from toolgate.core.deps import Dep, Dependencies

CANNOT_REWIND = "this change cannot be rewound"


class SessionCheckpoints:
    def __init__(
        self,
        data_root: Path,
        workspace: Path,
        session_id: str,
        settings: CheckpointSettings | None = None,
        forget: Callable[[Path], None] = lambda _p: None,
        transcript: Path | None = None,
        roots: Callable[[], Sequence[Path]] = lambda: (),
    ) -> None:
        """`forget` drops a file's readFileState: a restored file must be Read again before it is edited.
        `roots`: the session's additional working directories now (they are captured too).
        `transcript`: the session's transcript file, whose place each turn checkpoint records (None: the
        session keeps no conversation, and only its files can be rewound)."""
        self.data_root = data_root
        self._forget = forget
        self.transcript = transcript
        self._roots = roots
        self.workspace = workspace
        self.session_id = session_id
        self.settings = settings or CheckpointSettings()
        self.turn = 0
        self._resumed = False
        self._store: CheckpointStore | None = None
        self._off_reason: str | None = None if self.settings.enabled else "checkpoints are turned off in settings"
        self._lock = threading.Lock()
        self._before: dict[str, str] = {}  # a running call's tool_use_id → the checkpoint taken right before it

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
                    self._store = CheckpointStore(self.data_root, self.workspace, self.settings, long_lived_git=True)
                except CheckpointError as exc:
                    self._off_reason = str(exc)
                    raise
            return self._store

    def close(self) -> None:
        """The session ended: the store's long-lived git process ends with it."""
        with self._lock:
            if self._store is not None:
                self._store.close()

    def _create(
        self, tool_use_id: str | None, kind: str, note: str | None = None, agent_since: str | None = None
    ) -> Checkpoint:
        store = self.store()
        if kind == "turn":
            # Before the user message joins the transcript: a conversation rewind cuts back to here.
            mark = mark_of(read_transcript(self.transcript)) if self.transcript is not None else None
            return store.create(self.session_id, turn=self.turn, kind="turn", conversation=mark, roots=self._roots())
        return store.create(
            self.session_id,
            turn=self.turn,
            tool_use_id=tool_use_id,
            note=note,
            roots=self._roots(),
            agent_since=agent_since,
        )

    async def _warn_on_failure(self, failure: str, work: Callable[[], object]) -> str | None:
        """Run `work` (a checkpoint) off the event loop; a failure is a warning (`failure: why`), never an error."""
        try:
            await anyio.to_thread.run_sync(work)
        except CheckpointError as exc:
            return f"{failure}: {exc}"
        return None

    async def begin_turn(self) -> str | None:
        """A new turn (a user message, a run-tools input line): its checkpoint. Returns a warning or None."""
        return await self._warn_on_failure("no checkpoint was taken at the start of this turn", self._start_turn)

    def _start_turn(self) -> None:
        store = self.store()
        if not self._resumed:
            # A resumed session goes on counting from its last checkpoint.
            self._resumed = True
            listed = store.checkpoints(self.session_id)
            self.turn = max(self.turn, listed[-1].turn if listed else 0)
        self.turn += 1
        self._create(None, "turn")

    async def end_turn(self) -> str | None:
        """The turn finished: what its last call changed is captured now, not with the person's edits before
        the next turn (none when nothing changed). Returns a warning or None."""
        return await self._warn_on_failure(
            "no checkpoint was taken at the end of this turn", lambda: self._create(None, "tool", "end of turn")
        )

    async def before_change(self, tool_use_id: str) -> str | None:
        """Right before a call that may change files. Returns the warning its result must carry, or None."""
        self._before.pop(tool_use_id, None)
        return await self._warn_on_failure(CANNOT_REWIND, lambda: self._before_call(tool_use_id))

    def _before_call(self, tool_use_id: str) -> None:
        self._before[tool_use_id] = self._create(tool_use_id, "tool").id

    async def after_change(self, tool_use_id: str) -> str | None:
        """Right after a call that may change files: what it changed, and only that, is the agent's (see
        checkpoints.attribution). Nothing to do when no checkpoint was taken before it. Returns a warning or None."""
        return await self._after(tool_use_id, None, "what this call changed cannot be undone on its own")

    async def after_hooks(self, tool_use_id: str, event: str) -> str | None:
        """After hooks ran for a call: what they changed gets a checkpoint of its own (none when they changed
        nothing). Returns the warning to show, or None."""
        return await self._after(
            tool_use_id, f"after {event} hooks", f"what the {event} hooks changed cannot be rewound on its own"
        )

    async def _after(self, tool_use_id: str, note: str | None, failure: str) -> str | None:
        before = self._before.pop(tool_use_id, None)
        if before is None and note is None:
            return None
        return await self._warn_on_failure(failure, lambda: self._create(tool_use_id, "tool", note, before))

    def checkpoints(self) -> list[Checkpoint]:
        return self.store().checkpoints(self.session_id)

    def restore(
        self,
        target: str,
        *,
        what: RestoreWhat = "code",
        dry_run: bool = False,
        is_dirty: Callable[[Path], bool] = lambda _p: False,
        whole_tree: bool = False,
    ) -> tuple[RestoreReport, list[Path]]:
        """Rewind to `target` (see checkpoints.rewind). The readFileState of every file that now differs from
        what the model saw is dropped; returns those paths too. The caller makes sure no turn is running."""
        report, differ = rewind(
            self.store(),
            self.session_id,
            target,
            what=what,
            transcript=self.transcript,
            turn=self.turn,
            dry_run=dry_run,
            is_dirty=is_dirty,
            whole_tree=whole_tree,
        )
        touched = [self.workspace / change.path for change in differ]  # an additional root's are absolute
        if not dry_run:
            for path in touched:
                self._forget(path)
        return report, touched

    def forget(self, paths: Sequence[str]) -> None:
        """Files changed under the session (an undo from the changes bar): each must be Read again before an edit."""
        for path in paths:
            self._forget(self.workspace / path)  # an additional root's path is absolute already

    def take_restore_notice(self) -> str | None:
        """What the next model request must be told about files that are not what the model saw (once)."""
        try:
            return self.store().take_notice(self.session_id)
        except (CheckpointError, OSError):
            return None


def _close(checkpoints: SessionCheckpoints | None) -> None:
    if checkpoints is not None:
        checkpoints.close()


CHECKPOINTS: Dep[SessionCheckpoints | None] = Dep("checkpoints", lambda _r: None, close=_close)


class _Checkpointable(Protocol):
    """What a tool session offers that checkpoints need."""

    @property
    def workspace(self) -> Path: ...
    @property
    def id(self) -> str: ...
    @property
    def deps(self) -> Dependencies: ...
    @property
    def file_state(self) -> _FileState: ...
    @property
    def additional_dirs(self) -> list[Path]: ...


class _FileState(Protocol):
    def forget(self, path: Path | str) -> None: ...


def attach_checkpoints(
    session: _Checkpointable,
    data_root: Path,
    settings: CheckpointSettings | None = None,
    transcript: Path | None = None,
) -> SessionCheckpoints:
    """Give `session` checkpoints under `data_root`: before every call that may change files (CHANGE_GUARD),
    and for whoever starts turns and restores (CHECKPOINTS)."""
    checkpoints = SessionCheckpoints(
        data_root,
        session.workspace,
        session.id,
        settings,
        session.file_state.forget,
        transcript,
        roots=lambda: session.additional_dirs,  # read each time: a directory may be added during the session
    )
    session.deps.override(CHANGE_GUARD, checkpoints)
    session.deps.override(CHECKPOINTS, checkpoints)
    session.deps.get(CHECKPOINTS)  # resolved now: the session's close then closes it
    return checkpoints
