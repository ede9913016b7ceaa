"""toolgate/changes/list|keep|undo|without: the changes bar by the composer.

toolgate.checkpoints.changes does the work; this module maps it to the wire and holds each session's Keep
decisions. An undo runs between turns (refused while one runs: the agent would be writing the same files) and
is refused, with the files named, while the editor holds unsaved changes for one it would write.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.sidecar import protocol_changes as p
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:  # types only: the server imports this module before initialize; the store (git) on first use
    from toolgate.checkpoints.changes import ChangesReview, FileEntry
    from toolgate.checkpoints.session import SessionCheckpoints
    from toolgate.sidecar.editor_sessions import EditorSession
    from toolgate.text.hunks import Hunk

_OFF = "checkpoints are not set up for this session, so its changes cannot be listed or undone"


def _hunk(info: p.HunkInfo) -> Hunk:
    from toolgate.text.hunks import Hunk

    return Hunk(
        info.old_start,
        tuple(info.old_lines),
        info.new_start,
        tuple(info.new_lines),
        tuple(info.before),
        tuple(info.after),
    )


def _file_info(entry: FileEntry) -> p.ChangedFileInfo:
    from toolgate.text.hunks import count_changes

    added, removed = count_changes(entry.hunks)
    status = "created" if entry.without is None else "removed" if entry.current is None else "modified"
    return p.ChangedFileInfo(
        path=entry.path,
        status=status,
        added=added,
        removed=removed,
        hunks=[
            p.HunkInfo(
                old_start=h.old_start,
                old_lines=list(h.old),
                new_start=h.new_start,
                new_lines=list(h.new),
                before=list(h.before),
                after=list(h.after),
            )
            for h in entry.hunks
        ],
        conflict=entry.conflict,
        version=entry.version,
    )


def changes_handlers(
    session_of: Callable[[str], EditorSession], is_dirty: Callable[[Path], bool]
) -> dict[str, Callable[[Any], Awaitable[WireModel]]]:
    """The four methods, for the server's handler table (`session_of` raises the server's error for an unknown
    session)."""
    reviews: dict[str, ChangesReview] = {}

    def review_of(session_id: str) -> ChangesReview:
        from toolgate.checkpoints.changes import ChangesReview

        return reviews.setdefault(session_id, ChangesReview())

    def checkpoints_of(session_id: str) -> SessionCheckpoints | None:
        return session_of(session_id).runtime.checkpoints

    async def listing(params: p.ChangesListParams) -> p.ChangesListResult:
        return await _listing(checkpoints_of(params.session_id), review_of(params.session_id))

    async def keep(params: p.ChangesKeepParams) -> p.ChangesListResult:
        from toolgate.checkpoints.changes import keep as keep_change

        checkpoints = checkpoints_of(params.session_id)
        if checkpoints is None:
            return p.ChangesListResult(enabled=False, reason=_OFF)
        review = review_of(params.session_id)
        hunk = _hunk(params.hunk) if params.hunk is not None else None
        await anyio.to_thread.run_sync(
            lambda: keep_change(checkpoints.store(), checkpoints.session_id, review, params.path, hunk)
        )
        return await _listing(checkpoints, review)

    async def undo(params: p.ChangesUndoParams) -> p.ChangesUndoResult:
        from toolgate.session_files import SessionError

        live = session_of(params.session_id)
        checkpoints = live.runtime.checkpoints
        if checkpoints is None:
            return p.ChangesUndoResult(undone=False, reason=_OFF)
        try:
            async with live.between_turns():
                result = await anyio.to_thread.run_sync(
                    lambda: _undo(checkpoints, review_of(params.session_id), params, is_dirty)
                )
        except SessionError as exc:
            return p.ChangesUndoResult(undone=False, reason=str(exc))
        checkpoints.forget(result.files)
        return result

    async def without(params: p.ChangesWithoutParams) -> p.ChangesWithoutResult:
        from toolgate.checkpoints.changes import without_file

        checkpoints = checkpoints_of(params.session_id)
        if checkpoints is None:
            raise JsonRpcInvalidParams(message=_OFF)
        review = review_of(params.session_id)
        entry = await anyio.to_thread.run_sync(
            lambda: without_file(checkpoints.store(), checkpoints.session_id, review, params.path)
        )
        if entry is None:
            raise JsonRpcInvalidParams(message=f"{params.path} has no agent changes in the bar now; list them again")
        if entry.without is None:
            return p.ChangesWithoutResult(exists=False, content="")
        try:
            return p.ChangesWithoutResult(exists=True, content=entry.without.decode("utf-8"))
        except UnicodeDecodeError:
            return p.ChangesWithoutResult(exists=True, content="", binary=True)

    return {p.CHANGES_LIST: listing, p.CHANGES_KEEP: keep, p.CHANGES_UNDO: undo, p.CHANGES_WITHOUT: without}


async def _listing(checkpoints: SessionCheckpoints | None, review: ChangesReview) -> p.ChangesListResult:
    from toolgate.checkpoints.changes import list_changes
    from toolgate.checkpoints.models import CheckpointError

    if checkpoints is None:
        return p.ChangesListResult(enabled=False, reason=_OFF)
    try:
        found = await anyio.to_thread.run_sync(
            lambda: list_changes(checkpoints.store(), checkpoints.session_id, review)
        )
    except CheckpointError as exc:
        return p.ChangesListResult(enabled=False, reason=str(exc))
    return p.ChangesListResult(
        enabled=True,
        since=found.since,
        files=[_file_info(entry) for entry in found.files],
        not_undoable=found.not_undoable,
    )


def _undo(
    checkpoints: SessionCheckpoints,
    review: ChangesReview,
    params: p.ChangesUndoParams,
    is_dirty: Callable[[Path], bool],
) -> p.ChangesUndoResult:
    from toolgate.checkpoints.attribution import left_as_they_are
    from toolgate.checkpoints.changes import undo_files, undo_hunk
    from toolgate.checkpoints.models import CheckpointError
    from toolgate.text.hunks import HunkConflict

    store, session, turn = checkpoints.store(), checkpoints.session_id, checkpoints.turn
    try:
        if params.hunk is not None:
            if params.path is None:
                raise JsonRpcInvalidParams(message="an undo of one hunk names its file (`path`)")
            redo = undo_hunk(store, session, params.path, _hunk(params.hunk), turn=turn, is_dirty=is_dirty)
            return p.ChangesUndoResult(undone=True, redo=redo, files=[params.path])
        paths = None if params.path is None else [params.path]
        outcome = undo_files(store, session, review, paths, turn=turn, take_undo=params.take_undo, is_dirty=is_dirty)
    except HunkConflict as exc:
        return p.ChangesUndoResult(
            undone=False,
            reason=f"{params.path}: {exc}. Undo the whole file (its conflict then offers your choices), or edit it "
            "by hand",
            conflicts=[],
        )
    except CheckpointError as exc:
        return p.ChangesUndoResult(undone=False, reason=str(exc))
    reason = None
    if outcome.conflicts:
        reason = left_as_they_are(outcome.conflicts) + ". Keep yours, take the undo, or open the merge"
    elif not outcome.undone:
        reason = "there was nothing left to undo: the bar was out of date"
    return p.ChangesUndoResult(
        undone=bool(outcome.undone), reason=reason, redo=outcome.redo, files=outcome.undone, conflicts=outcome.conflicts
    )
