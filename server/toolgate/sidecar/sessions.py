"""Live sessions and their directories under the data root.

Layout (shared with the agent loop, which owns `transcript.jsonl`):

    <root>/sessions/<sessionId>/meta.json         SessionMeta: workspace, mode, title, created/updated times
    <root>/sessions/<sessionId>/outputs/          the session's output store
    <root>/sessions/<sessionId>/transcript.jsonl  the conversation (agent loop)

The root is the editor's storage directory when it passes one, else `$XDG_DATA_HOME/toolgate`
(default `~/.local/share/toolgate`). This module knows no transport.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import anyio
from pydantic import BaseModel, ConfigDict, ValidationError

from toolgate.core.clock import Clock, SystemClock
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime
from toolgate.sidecar.protocol import ReviewEdits, SessionInfo, SessionNewParams, Settings

logger = logging.getLogger("toolgate.sidecar.sessions")

META_FILE = "meta.json"
META_SAVE_INTERVAL_SECONDS = 5.0
# How long a closing session waits for its running turn to answer after interrupting it.
CLOSE_GRACE_SECONDS = 10.0


def default_data_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share") / "toolgate"


def session_dir(root: Path, session_id: str) -> Path:
    return root / "sessions" / session_id


class SessionMeta(BaseModel):
    """A session's `meta.json`, in the keys the agent loop's session store uses too (`id`, `workspace`,
    `mode`, `title`, `created`, `updated`). Unknown keys are kept and written back: another writer (the
    agent loop, a newer or older toolgate) may have put them there."""

    model_config = ConfigDict(extra="allow")

    id: str
    workspace: str
    mode: PermissionMode = PermissionMode.DEFAULT
    title: str = ""
    created: datetime
    updated: datetime
    review_edits: ReviewEdits = "when_asking"

    def info(self, live: bool) -> SessionInfo:
        return SessionInfo(
            session_id=self.id,
            workspace=self.workspace,
            mode=self.mode,
            review_edits=self.review_edits,
            title=self.title,
            created_at=self.created,
            updated_at=self.updated,
            live=live,
        )


# What the sidecar decides in meta.json; everything else there is kept as it is on disk when saving.
_SIDECAR_KEYS = ("mode", "review_edits")


class SessionError(ValueError):
    """A session request that cannot be served as asked (unknown id, missing workspace, ...)."""


RuntimeFactory = Callable[[SessionMeta, Path], Runtime]


class LiveSession:
    """An open session: its runtime, its meta.json, and the turns running in it (one at a time)."""

    def __init__(self, meta: SessionMeta, directory: Path, runtime: Runtime, clock: Clock) -> None:
        self.meta = meta
        self.directory = directory
        self.runtime = runtime
        self._clock = clock
        self._saved_at = meta.updated
        self.closed = False
        self._turn_lock = anyio.Lock()
        self._running: set[CancelToken] = set()

    @property
    def id(self) -> str:
        return self.meta.id

    def info(self) -> SessionInfo:
        return self.meta.info(live=True)

    def settings(self) -> Settings:
        return Settings(session_id=self.id, mode=self.meta.mode, review_edits=self.meta.review_edits)

    async def run_turn(self, uses: Sequence[ToolUse], token: CancelToken) -> list[ToolResult]:
        """Run one turn. Turns of one session run one after another; `token` interrupts this one."""
        self._running.add(token)
        try:
            async with self._turn_lock:
                if self.closed:
                    token.cancel()  # deleted while this turn waited: every call gets a "not run" result
                return await self.runtime.run_turn(uses, token)
        finally:
            self._running.discard(token)
            if not self.closed:
                self.touch(quietly=True)

    def cancel_turns(self) -> None:
        for token in list(self._running):
            token.cancel()

    def set_mode(self, mode: PermissionMode) -> None:
        self.runtime.session.mode = mode
        self.meta.mode = mode
        self.touch(save=True)

    def set_review_edits(self, review_edits: ReviewEdits) -> None:
        self.runtime.session.review_edits = review_edits
        self.meta.review_edits = review_edits
        self.touch(save=True)

    def touch(self, *, save: bool = False, quietly: bool = False) -> None:
        """Mark the session used now. meta.json is rewritten at most every few seconds for this alone
        (a turn should not pay for a file write), and always when the session closes. `quietly`: a failed
        write is logged, not raised (a turn's results must never be lost to a timestamp)."""
        self.meta.updated = _now(self._clock)
        if save or (self.meta.updated - self._saved_at).total_seconds() >= META_SAVE_INTERVAL_SECONDS:
            self.save(quietly=quietly)

    def save(self, *, quietly: bool = False) -> None:
        """Write meta.json, keeping what another writer put there (a title, keys this version does not know)."""
        try:
            self.meta = _merged(self.directory, self.meta)
            write_meta(self.directory, self.meta)
        except OSError as exc:
            if not quietly:
                raise
            logger.warning("could not update %s of session %s: %s", META_FILE, self.id, exc)
            return
        self._saved_at = self.meta.updated

    async def aclose(self) -> None:
        """Interrupt running turns, give them a moment to answer, then close the runtime (background tasks die)."""
        self.closed = True
        self.cancel_turns()
        with anyio.move_on_after(CLOSE_GRACE_SECONDS, shield=True) as waiting:
            await self._turn_lock.acquire()
        if waiting.cancelled_caught:
            logger.error(
                "a turn in session %s did not stop within %.0f s; closing it anyway", self.id, CLOSE_GRACE_SECONDS
            )
        try:
            await self.runtime.aclose()
        finally:
            if self.meta.updated != self._saved_at:
                self.save(quietly=True)
            if not waiting.cancelled_caught:
                self._turn_lock.release()


def _now(clock: Clock) -> datetime:
    return datetime.fromtimestamp(clock.now(), tz=UTC)


def _merged(directory: Path, meta: SessionMeta) -> SessionMeta:
    try:
        on_disk = read_meta(directory)
    except (FileNotFoundError, ValueError):  # nothing there, or nothing usable: ours is all there is
        return meta
    update = {key: getattr(meta, key) for key in _SIDECAR_KEYS}
    update["updated"] = max(on_disk.updated, meta.updated)
    return on_disk.model_copy(update=update)


def write_meta(directory: Path, meta: SessionMeta) -> None:
    """Atomically: a crash mid-write must never leave a session that cannot be listed."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".meta-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(meta.model_dump_json(indent=2) + "\n")
        os.replace(temp, directory / META_FILE)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def read_meta(directory: Path) -> SessionMeta:
    return SessionMeta.model_validate_json((directory / META_FILE).read_bytes())


class SessionManager:
    def __init__(self, root: Path, build: RuntimeFactory, clock: Clock | None = None) -> None:
        self.root = root
        self._build = build
        self._clock = clock or SystemClock()
        self._live: dict[str, LiveSession] = {}

    def get(self, session_id: str) -> LiveSession:
        live = self._live.get(session_id)
        if live is None:
            if (session_dir(self.root, session_id) / META_FILE).is_file():
                raise SessionError(f"Session {session_id} is not open; open it with toolgate/session/load first.")
            raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.")
        return live

    def create(self, params: SessionNewParams, default_workspace: Path | None) -> LiveSession:
        raw = params.workspace or (str(default_workspace) if default_workspace else None)
        if raw is None:
            raise SessionError(
                "No workspace: the editor gave no workspace folder at initialize, so session/new needs `workspace`."
            )
        workspace = _existing_dir(raw)
        session_id = uuid.uuid4().hex
        directory = session_dir(self.root, session_id)
        now = _now(self._clock)
        meta = SessionMeta(
            id=session_id,
            workspace=str(workspace),
            mode=params.mode,
            review_edits=params.review_edits,
            title=params.title,
            created=now,
            updated=now,
        )
        write_meta(directory, meta)
        return self._open(meta, directory)

    def load(self, session_id: str) -> LiveSession:
        if session_id in self._live:
            return self._live[session_id]
        directory = session_dir(self.root, session_id)
        try:
            meta = read_meta(directory)
        except FileNotFoundError:
            raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.") from None
        except (OSError, ValidationError, ValueError) as exc:
            raise SessionError(
                f"Session {session_id} cannot be opened: its {META_FILE} is unreadable ({exc})."
            ) from None
        _existing_dir(meta.workspace)
        live = self._open(meta, directory)
        live.touch(save=True)
        return live

    def list(self) -> list[SessionInfo]:
        found: list[SessionInfo] = []
        sessions = self.root / "sessions"
        entries = sorted(sessions.iterdir()) if sessions.is_dir() else []
        for directory in entries:
            live = self._live.get(directory.name)
            if live is not None:
                found.append(live.info())
                continue
            try:
                meta = read_meta(directory)
            except FileNotFoundError:
                continue  # not a session directory (or one still being created)
            except (OSError, ValidationError, ValueError) as exc:
                logger.warning("skipping %s: its %s is unreadable (%s)", directory, META_FILE, exc)
                continue
            found.append(meta.info(live=False))
        return sorted(found, key=lambda s: s.updated_at, reverse=True)

    async def delete(self, session_id: str) -> None:
        directory = session_dir(self.root, session_id)
        live = self._live.pop(session_id, None)
        if live is None and not directory.is_dir():
            raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.")
        # Half a deletion (closed but not removed, or the reverse) would be worse than none: finish it.
        with anyio.CancelScope(shield=True):
            if live is not None:
                await live.aclose()
            shutil.rmtree(directory, ignore_errors=True)

    def cancel_all_turns(self) -> None:
        for live in self._live.values():
            live.cancel_turns()

    async def close_all(self) -> None:
        while self._live:
            _, live = self._live.popitem()
            try:
                await live.aclose()
            except Exception:
                logger.exception("closing session %s failed", live.id)

    def _open(self, meta: SessionMeta, directory: Path) -> LiveSession:
        live = LiveSession(meta, directory, self._build(meta, directory), self._clock)
        self._live[meta.id] = live
        return live


def _existing_dir(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise SessionError(f"The workspace must be an absolute path, not {raw!r}.")
    if not path.is_dir():
        raise SessionError(f"The workspace {raw} is not a directory (it does not exist, or it is a file).")
    return path.resolve()
