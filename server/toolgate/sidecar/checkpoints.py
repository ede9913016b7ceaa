"""toolgate/checkpoints/list|diff|restore: the editor's view of a session's checkpoints.

The store does the work (toolgate.checkpoints); this module only maps it to the wire models. A restore is
refused, with the files named, when the editor holds unsaved changes for any file it would touch, and while a
turn runs in the session (turns wait for a restore that has started). After a conversation rewind the open
chat goes on from the shortened transcript.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.checkpoints.models import Checkpoint, CheckpointError
from toolgate.sidecar import protocol_checkpoints as p
from toolgate.sidecar.protocol import (
    CHECKPOINTS_DIFF,
    CHECKPOINTS_FILE,
    CHECKPOINTS_LIST,
    CHECKPOINTS_RESTORE,
    SessionRef,
)
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:  # types only: the server imports this module before initialize; the store (git) on first use
    from toolgate.checkpoints.session import SessionCheckpoints
    from toolgate.checkpoints.turns import Turn
    from toolgate.sidecar.editor_sessions import EditorSession

_OFF = "checkpoints are not set up for this session"


def _info(checkpoint: Checkpoint) -> p.CheckpointInfo:
    return p.CheckpointInfo(
        id=checkpoint.id,
        turn=checkpoint.turn,
        tool_use_id=checkpoint.tool_use_id,
        kind=checkpoint.kind,
        time=checkpoint.time.isoformat(),
        changed=checkpoint.changed,
        skipped=checkpoint.skipped,
        note=checkpoint.note,
        conversation=checkpoint.conversation is not None,
    )


def checkpoint_handlers(
    session_of: Callable[[str], EditorSession], is_dirty: Callable[[Path], bool]
) -> dict[str, Callable[[Any], Awaitable[WireModel]]]:
    """The three methods, for the server's handler table. `session_of` finds a live session (and raises the
    server's error for an unknown one)."""

    async def listing(params: SessionRef) -> p.CheckpointsListResult:
        return await list_checkpoints(session_of(params.session_id).runtime.checkpoints)

    async def diff(params: p.CheckpointsDiffParams) -> p.CheckpointsDiffResult:
        try:
            return await diff_checkpoint(session_of(params.session_id).runtime.checkpoints, params, is_dirty)
        except CheckpointError as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None

    async def file(params: p.CheckpointFileParams) -> p.CheckpointFileResult:
        try:
            return await checkpoint_file(session_of(params.session_id).runtime.checkpoints, params)
        except CheckpointError as exc:
            raise JsonRpcInvalidParams(message=str(exc)) from None

    async def restore(params: p.CheckpointsRestoreParams) -> p.CheckpointsRestoreResult:
        from toolgate.session_files import SessionError

        live = session_of(params.session_id)
        try:
            async with live.between_turns():
                result = await restore_checkpoint(live.runtime.checkpoints, params, is_dirty)
                checkpoints = live.runtime.checkpoints
                if result.conversation_restored and live.chat is not None and checkpoints is not None:
                    from toolgate.agent.stored_chat import reload_conversation

                    assert checkpoints.transcript is not None  # a conversation was rewound: there is one
                    reload_conversation(live.chat, checkpoints.transcript)
                return result
        except SessionError as exc:
            return p.CheckpointsRestoreResult(restored=False, reason=str(exc))

    return {CHECKPOINTS_LIST: listing, CHECKPOINTS_DIFF: diff, CHECKPOINTS_RESTORE: restore, CHECKPOINTS_FILE: file}


def forget_checkpoints(data_root: Path, session_id: str) -> None:
    """A deleted session's checkpoints go with it (the shared objects are freed by the next gc)."""
    from toolgate.checkpoints.store import CheckpointStore

    try:
        CheckpointStore.for_session(data_root, session_id).delete_session(session_id)
    except CheckpointError:
        return  # it never had any, or git is gone: nothing to delete


async def list_checkpoints(checkpoints: SessionCheckpoints | None) -> p.CheckpointsListResult:
    if checkpoints is None:
        return p.CheckpointsListResult(enabled=False, reason=_OFF, checkpoints=[])
    try:
        found, turns = await anyio.to_thread.run_sync(_listing, checkpoints)
    except CheckpointError as exc:
        return p.CheckpointsListResult(enabled=False, reason=str(exc), checkpoints=[])
    return p.CheckpointsListResult(
        enabled=True,
        checkpoints=[_info(c) for c in found],
        turns=[p.TurnInfo(**turn.model_dump()) for turn in turns],
    )


def _listing(checkpoints: SessionCheckpoints) -> tuple[list[Checkpoint], list[Turn]]:
    from toolgate.agent.stored_chat import prompt_offsets
    from toolgate.checkpoints.conversation import read_transcript
    from toolgate.checkpoints.turns import session_turns

    found = checkpoints.checkpoints()
    said = read_transcript(checkpoints.transcript) if checkpoints.transcript is not None else b""
    return found, session_turns(found, said, prompt_offsets(said))


async def diff_checkpoint(
    checkpoints: SessionCheckpoints | None,
    params: p.CheckpointsDiffParams,
    is_dirty: Callable[[Path], bool] = lambda _path: False,
) -> p.CheckpointsDiffResult:
    """Raises CheckpointError (an unknown id, checkpoints off) for the caller to turn into a JSON-RPC error."""
    from toolgate.checkpoints.restore import compare

    if checkpoints is None:
        raise CheckpointError(_OFF)
    if params.to is not None:
        to = params.to
        files, patch = await anyio.to_thread.run_sync(
            lambda: compare(checkpoints.store(), checkpoints.session_id, params.checkpoint_id, to)
        )
        return p.CheckpointsDiffResult(files=files, diff=patch)
    report, _ = await anyio.to_thread.run_sync(lambda: checkpoints.restore(params.checkpoint_id, dry_run=True))
    workspace = checkpoints.store().workspace  # the restore's own test for unsaved work, on the same paths
    unsaved = [change.path for change in report.changes if is_dirty(workspace / change.path)]
    return p.CheckpointsDiffResult(files=report.changes, diff=report.diff, unsaved=unsaved)


async def checkpoint_file(
    checkpoints: SessionCheckpoints | None, params: p.CheckpointFileParams
) -> p.CheckpointFileResult:
    """For the checkpoint side of the editor's diff views. Raises CheckpointError like diff_checkpoint."""
    from toolgate.checkpoints.restore import file_at

    if checkpoints is None:
        raise CheckpointError(_OFF)
    data = await anyio.to_thread.run_sync(
        lambda: file_at(checkpoints.store(), checkpoints.session_id, params.checkpoint_id, params.path)
    )
    if data is None:
        return p.CheckpointFileResult(exists=False, content="")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return p.CheckpointFileResult(exists=True, content="", binary=True)
    if "\0" in text:
        return p.CheckpointFileResult(exists=True, content="", binary=True)
    return p.CheckpointFileResult(exists=True, content=text)


async def restore_checkpoint(
    checkpoints: SessionCheckpoints | None, params: p.CheckpointsRestoreParams, is_dirty: Callable[[Path], bool]
) -> p.CheckpointsRestoreResult:
    if checkpoints is None:
        return p.CheckpointsRestoreResult(restored=False, reason=_OFF)
    try:
        report, _ = await anyio.to_thread.run_sync(
            lambda: checkpoints.restore(params.checkpoint_id, what=params.what, is_dirty=is_dirty)
        )
    except CheckpointError as exc:
        return p.CheckpointsRestoreResult(restored=False, reason=str(exc))
    from toolgate.checkpoints.attribution import conflict_message

    how = f"`toolgate rewind --session {checkpoints.session_id} --to {params.checkpoint_id} --whole-tree`"
    return p.CheckpointsRestoreResult(
        restored=True,
        reason=conflict_message(report, how) if report.conflicts else None,
        redo=report.redo,
        files=report.changes,
        conversation_restored=params.what != "code",
        entries_removed=report.entries_removed,
    )
