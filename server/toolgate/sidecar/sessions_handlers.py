"""toolgate/session/rename|search|export: the panel's session history.

Everything here reads the session files (meta.json, the transcript) and needs no open session: a person looks
through, renames and exports sessions without starting their runtimes. Searching and exporting read
transcripts, so they run in a worker thread and the event loop keeps serving.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from toolgate.session_files import SessionError, SessionNotFound
from toolgate.sidecar import protocol_sessions as p
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:  # types only: the server imports this module before initialize
    from toolgate.session_files import SessionFiles, SessionMeta
    from toolgate.sidecar.editor_sessions import SessionManager


def sessions_handlers(sessions: Callable[[], SessionManager]) -> dict[str, Callable[[Any], Awaitable[WireModel]]]:
    """The three methods, for the server's handler table (`sessions` is built on first use)."""

    async def rename(params: p.SessionRenameParams) -> p.SessionRenameResult:
        return p.SessionRenameResult(title=sessions().rename(params.session_id, params.title))

    async def search(params: p.SessionSearchParams) -> p.SessionSearchResult:
        store = sessions().store
        matches = await anyio.to_thread.run_sync(search_sessions, store, params.query)
        return p.SessionSearchResult(matches=matches)

    async def export(params: p.SessionExportParams) -> p.SessionExportResult:
        store = sessions().store
        return await anyio.to_thread.run_sync(export_session, store, params.session_id, params.format)

    return {p.SESSION_RENAME: rename, p.SESSION_SEARCH: search, p.SESSION_EXPORT: export}


def search_sessions(store: SessionFiles, query: str) -> list[p.SessionMatch]:
    from toolgate.agent.transcript_search import find_in_transcript

    matches: list[p.SessionMatch] = []
    for meta in store.list():
        in_title = query.lower() in meta.title.lower()
        path = store.transcript_path(meta.id)
        try:
            raw = path.read_bytes()
        except OSError:  # no conversation yet (or it went with a deletion): only the title can match
            raw = b""
        snippet = find_in_transcript(path, raw, query) if raw else None
        if in_title or snippet is not None:
            matches.append(p.SessionMatch(session_id=meta.id, in_title=in_title, snippet=snippet))
    return matches


def export_session(store: SessionFiles, session_id: str, format: p.ExportFormat) -> p.SessionExportResult:
    from toolgate.agent.transcript import load_transcript
    from toolgate.agent.transcript_export import ExportedSession, export_file_name, export_json, export_markdown
    from toolgate.core.child_env import own_secret_values

    meta = _meta(store, session_id)
    loaded = load_transcript(store.transcript_path(session_id))
    session = ExportedSession(
        id=meta.id, title=meta.title, workspace=meta.workspace, created=meta.created, updated=meta.updated
    )
    # Secrets are taken out of every text as it is exported: the shapes, and this process's own secret values.
    known = own_secret_values()
    render = export_json if format == "json" else export_markdown
    content = render(session, loaded.history, loaded.compactions, loaded.subagents, known)
    return p.SessionExportResult(
        content=content, file_name=export_file_name(meta.title, "json" if format == "json" else "md", known)
    )


def _meta(store: SessionFiles, session_id: str) -> SessionMeta:
    try:
        return store.load(session_id)
    except SessionNotFound:
        raise SessionError(f"There is no session {session_id}; toolgate/session/list shows the sessions.") from None
