"""The changes bar: the agent's changes of the last turns as they stand in the files now, file by file and hunk
by hunk, with Keep and Undo for one hunk, one file, or all of them.

A file's entry compares the file now with the same file without the agent's changes (every call's change since
the bar's first turn, undone newest first by checkpoints.attribution): so the person's own edits are on both
sides and never among the hunks. Where the person has since edited lines the agent changed, the file is a
conflict: it shows no hunks, and its undo waits for the person's choice (keep mine, take the undo, merge).

Keep changes no file: a kept file counts only the agent's calls made after the Keep; a kept hunk is added to
the "without" side, so it is no longer a difference. Keeps live in the sidecar's memory: after a restart kept
changes show again, which loses nothing. Undo takes a redo checkpoint first and tells the model's next request
which files changed under it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.checkpoints.attribution import (
    AgentChange,
    ChangeConflict,
    absolute_path,
    agent_history,
    read_current,
    session_roots,
    undo_file,
    write_planned,
)
from toolgate.checkpoints.models import Checkpoint, CheckpointError, UndoConflict
from toolgate.checkpoints.store import CheckpointStore
from toolgate.text.hunks import Hunk, HunkConflict, apply_hunk, hunks_between, reverse_hunk

TURNS_SHOWN = 3  # the turn running (or just finished) and the two before it


@dataclass(slots=True)
class _Kept:
    at: str = "000000"  # the agent's calls made before this checkpoint are kept whole
    hunks: list[Hunk] = field(default_factory=list)  # kept one by one since, in the order they were kept


@dataclass(slots=True)
class ChangesReview:
    """One session's Keep decisions, by file."""

    kept: dict[str, _Kept] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str
    current: bytes | None  # the file now (None: there is none)
    without: bytes | None  # the file without the agent's changes not kept (None: it would not exist)
    hunks: list[Hunk]  # empty for a binary file or a conflict: those are undone whole, or not at all
    conflict: str | None = None  # why the agent's changes cannot be taken out of the file as it is now

    @property
    def version(self) -> str:
        """Names the file's bytes now, so that the editor's view of it can be told apart from a later one."""
        return hashlib.sha256(b"\0absent" if self.current is None else self.current).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Listing:
    since: str | None  # the first turn's checkpoint; None: no turn yet
    files: list[FileEntry]
    not_undoable: list[str]


@dataclass(frozen=True, slots=True)
class UndoOutcome:
    redo: str | None  # restore it to take the undo back; None when nothing was written
    undone: list[str]
    conflicts: list[UndoConflict]


def bar_floor(checkpoints: list[Checkpoint]) -> str | None:
    """The checkpoint the bar counts from: the start of the first of the last TURNS_SHOWN turns (a session of
    calls without turns, as an editor's tools/run makes: its first checkpoint)."""
    starts = [c.id for c in checkpoints if c.kind == "turn"] or [c.id for c in checkpoints[:1]]
    return starts[-TURNS_SHOWN:][0] if starts else None


def list_changes(store: CheckpointStore, session: str, review: ChangesReview) -> Listing:
    checkpoints = store.checkpoints(session)
    since = bar_floor(checkpoints)
    if since is None:
        return Listing(None, [], [])
    history, not_undoable = agent_history(store, session, since)
    roots = session_roots(checkpoints)
    entries = [_entry(store, review, path, changes, roots) for path, changes in history.items()]
    return Listing(since, [e for e in entries if e.conflict is not None or e.without != e.current], not_undoable)


def _entry(
    store: CheckpointStore, review: ChangesReview, path: str, changes: list[AgentChange], roots: set[str]
) -> FileEntry:
    kept = review.kept.get(path, _Kept())
    current = read_current(store, path, roots)
    try:
        without = undo_file(store.git, current, [c for c in changes if int(c.made_after) >= int(kept.at)])
    except ChangeConflict as exc:
        return FileEntry(path, current, None, [], str(exc))
    old, new = _text(without), _text(current)
    if old is None or new is None:
        return FileEntry(path, current, without, [])
    kept_text = old
    for hunk in kept.hunks:
        try:
            kept_text = apply_hunk(kept_text, hunk)
        except HunkConflict:
            continue  # its lines changed since it was kept: it shows again, to be decided again
    if kept_text != old:
        without = kept_text.encode("utf-8")
    return FileEntry(path, current, without, hunks_between(kept_text, new))


def _text(data: bytes | None) -> str | None:
    """A file's text for hunks; None for a binary or undecodable file (an absent file is empty)."""
    if data is None:
        return ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else text


def keep(store: CheckpointStore, session: str, review: ChangesReview, path: str, hunk: Hunk | None) -> None:
    """Accept a file's changes (or one hunk of them): the bar no longer shows them; no file changes."""
    if hunk is None:
        checkpoints = store.checkpoints(session)
        latest = checkpoints[-1].id if checkpoints else "000000"
        review.kept[path] = _Kept(at=latest)
    else:
        review.kept.setdefault(path, _Kept()).hunks.append(hunk)


def undo_files(
    store: CheckpointStore,
    session: str,
    review: ChangesReview,
    paths: list[str] | None,
    *,
    turn: int,
    take_undo: bool = False,
    is_dirty: Callable[[Path], bool] = lambda _p: False,
) -> UndoOutcome:
    """Undo the agent's changes shown for `paths` (None: every file in the bar). A conflict is left as it is and
    listed, unless `take_undo`: then the undo wins where it meets the person's edits (their other edits stay)."""
    listing = list_changes(store, session, review)
    wanted = [e for e in listing.files if paths is None or e.path in paths]
    planned: dict[str, bytes | None] = {}
    read_from = {entry.path: entry.current for entry in wanted}
    conflicts: list[UndoConflict] = []
    for entry in wanted:
        if entry.conflict is None:
            planned[entry.path] = entry.without
            continue
        if not take_undo:
            conflicts.append(UndoConflict(path=entry.path, reason=entry.conflict))
            continue
        try:
            planned[entry.path] = _taken(store, session, review, listing.since, entry)
        except ChangeConflict as exc:  # a symbolic link: only a whole-tree restore puts it back
            conflicts.append(UndoConflict(path=entry.path, reason=str(exc)))
    if not planned or listing.since is None:
        return UndoOutcome(None, [], conflicts)
    redo = _write(store, session, listing.since, planned, read_from, turn=turn, is_dirty=is_dirty)
    return UndoOutcome(redo, list(planned), conflicts)


def without_file(store: CheckpointStore, session: str, review: ChangesReview, path: str) -> FileEntry | None:
    """`path`'s entry in the bar (None: it has none now); for a conflict, `without` is what taking the undo would
    make of it (the undo wins where it meets the person's edits): the side a merge by hand starts from."""
    listing = list_changes(store, session, review)
    entry = next((e for e in listing.files if e.path == path), None)
    if entry is None or entry.conflict is None:
        return entry
    try:
        return FileEntry(path, entry.current, _taken(store, session, review, listing.since, entry), [], entry.conflict)
    except ChangeConflict:
        return entry


def _taken(
    store: CheckpointStore, session: str, review: ChangesReview, since: str | None, entry: FileEntry
) -> bytes | None:
    history, _ = agent_history(store, session, since or "000000", paths={entry.path})
    kept = review.kept.get(entry.path, _Kept())
    changes = [c for c in history.get(entry.path, []) if int(c.made_after) >= int(kept.at)]
    return undo_file(store.git, entry.current, changes, take_undo=True)


def undo_hunk(
    store: CheckpointStore,
    session: str,
    path: str,
    hunk: Hunk,
    *,
    turn: int,
    is_dirty: Callable[[Path], bool] = lambda _p: False,
) -> str:
    """Take one hunk of the agent's change back out of the file as it is now; returns the redo checkpoint.
    Raises HunkConflict when the person changed those lines since, CheckpointError when it cannot be written."""
    checkpoints = store.checkpoints(session)
    current = read_current(store, path, session_roots(checkpoints))
    text = _text(current)
    if current is None or text is None:
        raise HunkConflict(f"{path} is gone or is no longer text: undo the file as a whole")
    since = bar_floor(checkpoints)
    if since is None:
        raise CheckpointError("no turn has changed files in this session yet: there is nothing to undo")
    planned: dict[str, bytes | None] = {path: reverse_hunk(text, hunk).encode("utf-8")}
    return _write(store, session, since, planned, {path: current}, turn=turn, is_dirty=is_dirty)


def _write(
    store: CheckpointStore,
    session: str,
    since: str,
    planned: dict[str, bytes | None],
    read_from: Mapping[str, bytes | None],
    *,
    turn: int,
    is_dirty: Callable[[Path], bool],
) -> str:
    dirty = [path for path in planned if is_dirty(absolute_path(store, path))]
    if dirty:
        raise CheckpointError(
            f"{', '.join(dirty[:10])} has unsaved changes in the editor, and the undo would overwrite them; "
            "save or revert, then undo again"
        )
    target = store.get(session, since)
    note = "before an undo from the changes bar"
    redo = write_planned(store, session, target, planned, read_from, turn=turn, note=note)
    told = store.take_notice(session)
    names = ", ".join(list(planned)[:20])
    store.leave_notice(
        session,
        (told + "\n" if told else "")
        + f"The user undid some of your changes to {len(planned)} file(s): {names}. Their contents differ from "
        "what you wrote; Read a file again before editing it.",
    )
    return redo.id
