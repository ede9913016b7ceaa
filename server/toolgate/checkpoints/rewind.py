"""Rewind a session to a checkpoint: its files (code), its conversation, or both — the one way the CLI and the
editor do it.

Every rewind first takes a redo checkpoint that holds the files and the transcript as they are, so restoring
that checkpoint (in the same mode) undoes it. The transcript is replaced in one step, and only after the files
were restored: a restore that fails part-way leaves the conversation as it was. What the model must be told
before its next request (files that are not what it saw) is left with the store (`take_notice`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolgate.checkpoints.attribution import undo_agent
from toolgate.checkpoints.conversation import (
    entries_between,
    find_conversation,
    mark_of,
    read_transcript,
    replace_transcript,
)
from toolgate.checkpoints.models import Checkpoint, CheckpointError, FileChange, RestoreReport, RestoreWhat
from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.store import CheckpointStore

_NAMED = 20


def rewind(
    store: CheckpointStore,
    session: str,
    target_id: str,
    *,
    what: RestoreWhat = "code",
    transcript: Path | None,
    turn: int,
    dry_run: bool = False,
    is_dirty: Callable[[Path], bool] = lambda _p: False,
    whole_tree: bool = False,
) -> tuple[RestoreReport, list[FileChange]]:
    """Rewind `session` to checkpoint `target_id`. `transcript`: the session's transcript file (None: the
    session keeps no conversation, as with run-tools). Files: the agent's changes since then are undone and
    the person's kept (checkpoints.attribution; files in conflict are left as they are and listed), or with
    `whole_tree` (or to a restore's redo checkpoint) every file goes back to the checkpoint. Returns the report
    and the files that now differ from what the model last saw (restored ones, or for a conversation-only
    rewind the ones left as they are)."""
    target = store.get(session, target_id)
    # A restore's redo checkpoint is the whole tree as it was before that restore: going back to it is a redo.
    files = restore if whole_tree or target.kind == "restore" else undo_agent
    if what == "code":
        mark = mark_of(read_transcript(transcript)) if transcript is not None else None
        report = files(store, session, target_id, turn=turn, dry_run=dry_run, is_dirty=is_dirty, conversation=mark)
        if not dry_run and report.changes:
            store.leave_notice(session, _code_notice(target, report.changes))
        return report, report.changes
    current, wanted = _conversation_at(store, session, target, transcript)
    removed = entries_between(wanted, current)
    if dry_run:
        preview = files(store, session, target_id, turn=turn, dry_run=True, is_dirty=is_dirty)
        if what == "conversation":
            preview = preview.model_copy(update={"changes": [], "diff": ""})  # no file is touched
        return preview.model_copy(update={"what": what, "entries_removed": removed}), preview.changes
    assert transcript is not None  # _conversation_at refused a session without one
    redo_mark = mark_of(current, store.keep_transcript(current))
    if what == "both":
        report = files(store, session, target_id, turn=turn, is_dirty=is_dirty, conversation=redo_mark)
        differ = report.changes
    else:
        # The files a conversation-only rewind leaves as they are, though they differ from then.
        differ = restore(store, session, target_id, turn=turn, dry_run=True).changes
        redo = store.create(
            session, turn=turn, kind="restore", note=f"before restoring to {target.id}", conversation=redo_mark
        )
        report = RestoreReport(target=target.id, redo=redo.id, changes=[])
    try:
        replace_transcript(transcript, wanted)
    except OSError as exc:
        raise CheckpointError(
            f"the conversation could not be rewound ({exc.strerror or exc}); it is as it was"
            + (f", but the files were restored: restore checkpoint {report.redo} to undo that" if differ else "")
        ) from None
    store.leave_notice(session, _conversation_notice(target, differ) if what == "conversation" and differ else None)
    return report.model_copy(update={"what": what, "entries_removed": removed}), differ


def _conversation_at(
    store: CheckpointStore, session: str, target: Checkpoint, transcript: Path | None
) -> tuple[bytes, bytes]:
    """The transcript now, and the one at `target`; CheckpointError with what to do when there is none."""
    if transcript is None:
        raise CheckpointError("this session keeps no conversation (a run-tools session): only --code can be rewound")
    if target.conversation is None:
        turns = [c.id for c in store.checkpoints(session) if c.turn == target.turn and c.conversation is not None]
        hint = f"; its turn starts at checkpoint {turns[0]}" if turns else ""
        raise CheckpointError(
            f"checkpoint {target.id} was taken before a tool call, not at a user message, so it holds no point "
            f"of the conversation{hint}; rewind the conversation to a turn checkpoint, or use --code"
        )
    current = read_transcript(transcript)
    wanted = find_conversation(target.conversation, [current, *store.kept_transcripts(session)])
    if wanted is None:
        raise CheckpointError(
            f"the conversation at checkpoint {target.id} is no longer kept (its redo checkpoint fell out of "
            "retention, or the transcript was changed by hand); its files can still be restored with --code"
        )
    return current, wanted


def _names(changes: list[FileChange]) -> str:
    return ", ".join(c.path for c in changes[:_NAMED]) + ("…" if len(changes) > _NAMED else "")


def _code_notice(target: Checkpoint, changes: list[FileChange]) -> str:
    return (
        f"The user restored {len(changes)} file(s) to checkpoint {target.id} (turn {target.turn}): "
        f"{_names(changes)}. Their contents may differ from what you saw; Read a file again before editing it."
    )


def _conversation_notice(target: Checkpoint, differ: list[FileChange]) -> str:
    return (
        f"The user rewound the conversation to checkpoint {target.id} (turn {target.turn}) and kept the files as "
        f"they are; {len(differ)} file(s) differ from then: {_names(differ)}. Read a file again before editing it."
    )
