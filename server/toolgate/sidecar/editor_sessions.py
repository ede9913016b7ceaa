"""Editor sessions: the sessions this sidecar has open (EditorSession), over the shared files (SessionFiles).

The files (`meta.json`, `transcript.jsonl`, `outputs/` under `<root>/sessions/<sessionId>/`) are laid out
by `toolgate.session_files`, which the agent loop and the headless CLI use too. The sidecar decides two
things in meta.json — the permission mode and whether edits are always reviewed — and keeps whatever else
another writer put there (the agent loop names a session after its first message). This module knows no
transport.

The permission mode has one home while a session is open: its runtime's session (`EditorSession.mode`), changed
only by `EditorSession.set_mode`. meta.json records it so that the session reopens in it, and feeds it when the
session is opened; the settings files' defaultMode feeds it only where no mode was given (`build_runtime`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError

from toolgate.agent.events import StopReason
from toolgate.agent.loop import AgentChat, ChatBusy
from toolgate.agent.stored_chat import prompt_count
from toolgate.core.messages import TextBlock, ToolResult, ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime
from toolgate.sandbox.runtime import SANDBOX
from toolgate.session_files import META_FILE, SessionError, SessionFiles, SessionMeta, SessionNotFound
from toolgate.session_lease import SessionInUse, SessionLease, hold_session
from toolgate.sidecar.protocol import ReviewEdits, SessionInfo, SessionNewParams, Settings
from toolgate.sidecar.settings_answer import settings_answer

logger = logging.getLogger("toolgate.sidecar.editor_sessions")

# A turn marks its session as used; meta.json is rewritten for that at most this often (and on close).
META_SAVE_INTERVAL_SECONDS = 5.0
# How long a closing session waits for its running turn to answer after interrupting it.
CLOSE_GRACE_SECONDS = 10.0


RuntimeFactory = Callable[[SessionMeta, Path], Runtime]


def session_info(meta: SessionMeta, store: SessionFiles, live: bool, mode: PermissionMode | None = None) -> SessionInfo:
    """`mode`: the live mode of an open session; a closed one is in the mode its meta.json recorded."""
    return SessionInfo(
        session_id=meta.id,
        workspace=meta.workspace,
        mode=mode or meta.mode,
        review_edits=meta.review_edits,
        title=meta.title,
        created_at=meta.created,
        updated_at=meta.updated,
        live=live,
        turns=prompt_count(store.transcript_path(meta.id)),
    )


class EditorSession:
    """An open session: its runtime, its meta.json, and the turns running in it (one at a time)."""

    def __init__(self, meta: SessionMeta, store: SessionFiles, runtime: Runtime) -> None:
        self.meta = meta
        self.store = store
        self.runtime = runtime
        # This process's hold on the session (toolgate.session_lease), from its first turn until it is closed:
        # showing a session needs none (another window may show it too), changing its transcript does.
        self._lease: SessionLease | None = None
        self.chat: AgentChat | None = None  # created on the first chat request (sidecar/chat.py)
        self.closed = False
        # Taken by every turn; `fast_acquire`: a free lock is taken without first yielding to the event loop (a turn
        # of the loop on every tools/run; a waiting turn still waits its turn in order).
        self._turn_lock = anyio.Lock(fast_acquire=True)
        self._running: set[CancelToken] = set()
        self._last_touch = time.monotonic()
        self._touch_pending = False
        self._notices: list[str] = []  # told to the model with the next message (`tell`)

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def mode(self) -> PermissionMode:
        """The mode calls are decided in now."""
        return self.runtime.session.mode

    def info(self) -> SessionInfo:
        return session_info(self.meta, self.store, live=True, mode=self.mode)

    def settings(self) -> Settings:
        sandbox = self.runtime.session.deps.get(SANDBOX).state()
        return settings_answer(self.runtime.permissions, self.id, self.mode, self.meta.review_edits, sandbox)

    def claim(self) -> None:
        """Make the session this process's before its transcript or files change (a turn, a rewind, a repair).
        Refused, in words, while another process (a `toolgate chat`, another editor window) has it."""
        if self._lease is not None:
            return
        try:
            self._lease = hold_session(self.store.session_dir(self.id), "an editor's sidecar", doing="changed")
        except SessionInUse as exc:
            raise SessionError(str(exc)) from None
        except FileNotFoundError:
            raise SessionError(f"Session {self.id} was deleted (its files are gone); start a new one.") from None

    async def run_tools(self, uses: Sequence[ToolUse], token: CancelToken) -> list[ToolResult]:
        """Run one turn of tool calls (`toolgate/tools/run`). Turns of one session run one after another, chat
        turns included; `token` interrupts this one."""
        self._running.add(token)
        try:
            async with self._turn_lock:
                if self.closed:
                    token.cancel()  # deleted while this turn waited: every call gets a "not run" result
                else:
                    self.claim()
                return await self.runtime.orchestrator.run_turn(uses, token)
        finally:
            self._running.discard(token)
            if not self.closed:
                self._touch(force=False)

    def tell(self, notice: str) -> None:
        """Something the model should know that changed outside the session (the editor's workspace folders): it
        comes with the next message, as restored files do."""
        self._notices.append(notice)

    async def chat_send(
        self, chat: AgentChat, text: str, attach: Callable[[], Awaitable[Sequence[TextBlock]]] | None = None
    ) -> StopReason:
        """Answer a chat message, in turn with this session's other turns (so closing waits for it). `attach`
        reads what the person attached, once the turn is this message's (it records reads in readFileState)."""
        if chat.busy:
            raise ChatBusy("A message is still being answered in this session; interrupt it or wait for it.")
        async with self._turn_lock:
            if self.closed:
                raise SessionError(f"Session {self.id} was closed before the message could be answered.")
            self.claim()
            notices, self._notices = self._notices, []
            try:
                attached = () if attach is None else await attach()
                return await chat.send("".join(f"[{notice}]\n\n" for notice in notices) + text, attached)
            finally:
                # The first message named the session on disk: the list shows the name now, not a minute later.
                self._touch(force=not self.meta.title)

    @contextlib.asynccontextmanager
    async def between_turns(self) -> AsyncIterator[None]:
        """Hold off turns while something changes the session under them (a rewind). Refused, not queued,
        while a turn runs: what it is doing would be undone behind its back."""
        if self._turn_lock.locked() or (self.chat is not None and self.chat.busy):
            raise SessionError("A turn is running in this session; interrupt it or wait for it to finish first.")
        async with self._turn_lock:
            self.claim()
            yield

    def cancel_turns(self) -> None:
        for token in list(self._running):
            token.cancel()
        if self.chat is not None:
            self.chat.interrupt()

    def set_mode(self, mode: PermissionMode) -> None:
        """The one way to change an open session's mode: the next decision uses it, and meta.json records it."""
        self._update(mode=mode)  # recorded first: a mode that could not be recorded is not switched to either
        self.runtime.session.mode = mode

    def rename(self, title: str) -> None:
        self._update(used=False, title=title)

    def set_review_edits(self, review_edits: ReviewEdits) -> None:
        self._update(review_edits=review_edits)
        self.runtime.session.review_edits = review_edits

    def _update(self, *, used: bool = True, **changes: Any) -> None:
        """Change what the sidecar decides, on top of meta.json as it is on disk now. `used`: the change is a use
        of the session (the list puts it first); a new title is not."""
        try:
            current = self.store.load(self.id)
        except (SessionNotFound, ValueError):  # gone or unreadable: what this session knows is all there is
            current = self.meta
        self.meta = current.model_copy(update={**changes, "updated": datetime.now(UTC)} if used else changes)
        self.store.save(self.meta)
        if used:
            self._last_touch = time.monotonic()
            self._touch_pending = False

    def _touch(self, *, force: bool) -> None:
        """Mark the session used (a turn should not pay for a file write each time). A failure is logged:
        a turn's results must never be lost to a timestamp."""
        self._touch_pending = True
        if not force and time.monotonic() - self._last_touch < META_SAVE_INTERVAL_SECONDS:
            return
        try:
            self.meta = self.store.touch(self.id)
        except (OSError, SessionNotFound, ValueError) as exc:
            logger.warning("could not update %s of session %s: %s", META_FILE, self.id, exc)
            return
        self._last_touch = time.monotonic()
        self._touch_pending = False

    async def aclose(self) -> None:
        """Interrupt running turns, give them a moment to answer, then close the runtime (background tasks die)."""
        self.closed = True
        self.cancel_turns()
        with anyio.move_on_after(CLOSE_GRACE_SECONDS, shield=True) as waiting:
            await self._turn_lock.acquire()
        if waiting.cancelled_caught:
            logger.error("a turn in session %s did not stop in %.0f s; closing it anyway", self.id, CLOSE_GRACE_SECONDS)
        try:
            if self.chat is not None:
                await self.chat.aclose()  # also closes the runtime
            else:
                await self.runtime.aclose()
        finally:
            if self._touch_pending:
                self._touch(force=True)
            if self._lease is not None:
                self._lease.release()
            if not waiting.cancelled_caught:
                self._turn_lock.release()


class SessionManager:
    def __init__(self, store: SessionFiles, build: RuntimeFactory) -> None:
        self.store = store
        self._build = build
        self._live: dict[str, EditorSession] = {}

    def get(self, session_id: str) -> EditorSession:
        live = self._live.get(session_id)
        if live is None:
            if self.store.exists(session_id):
                raise SessionError(f"Session {session_id} is not open; open it with toolgate/session/load first.")
            raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.")
        return live

    def create(self, params: SessionNewParams, default_workspace: Path | None) -> EditorSession:
        raw = params.workspace or (str(default_workspace) if default_workspace else None)
        if raw is None:
            raise SessionError(
                "No workspace: the editor gave no workspace folder at initialize, so session/new needs `workspace`."
            )
        meta = self.store.create(_existing_dir(raw), params.mode)
        if params.title or params.review_edits != meta.review_edits:
            meta = meta.model_copy(update={"title": params.title, "review_edits": params.review_edits})
            self.store.save(meta)
        return self._open(meta)

    def load(self, session_id: str) -> EditorSession:
        if session_id in self._live:
            return self._live[session_id]
        try:
            meta = self.store.load(session_id)
        except SessionNotFound:
            raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.") from None
        except (OSError, ValidationError) as exc:
            raise SessionError(
                f"Session {session_id} cannot be opened: its {META_FILE} is unreadable ({exc})."
            ) from None
        _existing_dir(meta.workspace)
        live = self._open(meta)
        live._touch(force=True)
        return live

    def list(self) -> list[SessionInfo]:
        """Every session on disk, most recently used first; the open ones as this process knows them."""
        infos = [
            live.info() if (live := self._live.get(meta.id)) else session_info(meta, self.store, live=False)
            for meta in self.store.list()
        ]
        return sorted(infos, key=lambda s: s.updated_at, reverse=True)

    def rename(self, session_id: str, title: str) -> str:
        """Give a session the title a person chose (the first prompt no longer names it); the stored title."""
        live = self._live.get(session_id)
        if live is not None:
            live.rename(title)
            return live.meta.title
        try:
            meta = self.store.load(session_id)
        except SessionNotFound:
            raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.") from None
        meta.title = title
        self.store.save(meta)
        return meta.title

    async def delete(self, session_id: str) -> None:
        live = self._live.get(session_id)
        if live is None and not self.store.exists(session_id):
            raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.")
        # Held until the files are gone: a session another process is changing is not this one's to delete, and
        # none may start changing it while it goes. (Counted: a hold of this process's own session is its own.)
        try:
            lease = hold_session(self.store.session_dir(session_id), "an editor's sidecar", doing="deleted")
        except SessionInUse as exc:
            raise SessionError(str(exc)) from None
        except FileNotFoundError:  # the directory went with a deletion from elsewhere
            lease = None
        self._live.pop(session_id, None)
        # Half a deletion (closed but not removed, or the reverse) would be worse than none: finish it.
        try:
            with anyio.CancelScope(shield=True):
                if live is not None:
                    await live.aclose()
                with contextlib.suppress(SessionNotFound):  # no directory left: closing it was all there was to do
                    self.store.delete(session_id)
        finally:
            if lease is not None:
                lease.release()

    def open_sessions(self) -> tuple[EditorSession, ...]:
        return tuple(self._live.values())

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

    def _open(self, meta: SessionMeta) -> EditorSession:
        live = EditorSession(meta, self.store, self._build(meta, self.store.session_dir(meta.id)))
        self._live[meta.id] = live
        return live


def _existing_dir(raw: str) -> Path:
    path = Path(raw).expanduser()
    if not path.is_absolute():
        raise SessionError(f"The workspace must be an absolute path, not {raw!r}.")
    if not path.is_dir():
        raise SessionError(f"The workspace {raw} is not a directory (it does not exist, or it is a file).")
    return path.resolve()
