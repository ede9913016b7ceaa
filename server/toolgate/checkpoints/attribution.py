"""Undo the agent's changes, and only those: what each tool call changed (the checkpoint right before it to the
one right after it, see `Checkpoint.agent_since`) is reversed on top of the files as they are now.

Each file's agent changes are undone newest first, each as a 3-way merge (`git merge-file`'s answer, see
checkpoints.merges): base = the file after the call, ours = the file now, theirs = the file before the call.
The person's edits made between calls (or since) survive; where they touch the same lines as an agent change,
the file is a conflict and is left as it is, never overwritten. A whole-tree restore (checkpoints.restore) stays
the way to take everything back.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolgate.checkpoints.git import ShadowGit, read_blobs, split_z
from toolgate.checkpoints.merges import merge_file
from toolgate.checkpoints.models import (
    Checkpoint,
    CheckpointError,
    ConversationMark,
    FileChange,
    RestoreReport,
    UndoConflict,
)
from toolgate.checkpoints.store import CheckpointStore
from toolgate.core.atomic_file import FileBeneath, remove_file_beneath, write_files_beneath
from toolgate.core.beneath import NotAFolder, parent_beneath, remove_empty_folder_beneath


@dataclass(frozen=True, slots=True)
class AgentChange:
    """One call's change to one file: its bytes before and after the call (None: no such file)."""

    before: bytes | None
    after: bytes | None
    link: bool = False  # a symbolic link on either side: its bytes are a target path, not contents
    made_after: str = ""  # the checkpoint taken right before the call


class ChangeConflict(Exception):
    """An agent change the person has since edited on the same lines (or replaced, or removed): its reason."""


def agent_spans(checkpoints: list[Checkpoint], since: str | None = None) -> list[tuple[Checkpoint, Checkpoint]]:
    """Each tool call's (before, after) checkpoints, oldest first; with `since`, only calls made after that
    checkpoint. A call whose checkpoint before it fell out of retention is left out."""
    by_id = {c.id: c for c in checkpoints}
    floor = int(since) if since is not None else 0
    return [
        (by_id[c.agent_since], c)
        for c in checkpoints
        if c.agent_since is not None and c.agent_since in by_id and int(c.agent_since) >= floor
    ]


def agent_files(checkpoints: list[Checkpoint]) -> list[str]:
    """The files the agent's calls changed among `checkpoints` (their `changed` lists), in first-seen order."""
    return list(dict.fromkeys(path for c in checkpoints if c.agent_since is not None for path in c.changed))


def undo_change(git: ShadowGit, current: bytes | None, change: AgentChange, *, take_undo: bool = False) -> bytes | None:
    """The file with one agent change reversed and everything else kept. Raises ChangeConflict(reason).
    `take_undo`: the person chose the undo over their own edits where the two meet (a link still conflicts)."""
    if change.link:
        raise ChangeConflict("a symbolic link the agent changed: only a whole-tree restore puts links back")
    if current == change.after:
        return change.before
    if current is None:
        if change.before is None:
            return None  # the agent created it, the person removed it: nothing to undo
        if take_undo:
            return change.before
        raise ChangeConflict("removed since the agent changed it")
    if change.after is None or change.before is None or any(b"\0" in d for d in (current, change.after, change.before)):
        if take_undo:
            return change.before  # taken whole: there are no lines to merge
        if change.after is None:
            raise ChangeConflict("the agent removed it, and it was created again since")
        if change.before is None:
            raise ChangeConflict("the agent created it, and it was edited since")
        raise ChangeConflict("a binary file edited since the agent changed it")
    return _merge(git, base=change.after, ours=current, theirs=change.before, take_undo=take_undo)


def _merge(git: ShadowGit, *, base: bytes, ours: bytes, theirs: bytes, take_undo: bool = False) -> bytes:
    merged = merge_file(git, base=base, ours=ours, theirs=theirs, take_undo=take_undo)
    if merged.conflicts:
        places = "1 place" if merged.conflicts == 1 else f"{merged.conflicts} places"
        raise ChangeConflict(f"the same lines were edited since the agent changed them ({places})")
    return merged.content


def undo_file(
    git: ShadowGit, current: bytes | None, changes: list[AgentChange], *, take_undo: bool = False
) -> bytes | None:
    """The file with all of `changes` (one file's, oldest first) reversed, newest first. Raises ChangeConflict."""
    result = current
    for change in reversed(changes):
        result = undo_change(git, result, change, take_undo=take_undo)
    return result


def write_planned(
    store: CheckpointStore,
    session: str,
    target: Checkpoint,
    planned: dict[str, bytes | None],
    read_from: Mapping[str, bytes | None],
    *,
    turn: int,
    note: str,
    conversation: ConversationMark | None = None,
) -> Checkpoint:
    """Write each file's new bytes (None: remove it) after a redo checkpoint, which is returned. Directories
    that only held files the agent created since `target` go with them.

    `read_from`: each file's bytes the new ones were made from. A file saved since then (between the read and the
    redo checkpoint) would lose that save to bytes made without it, so nothing is written and the undo asks to be
    run again: the save stands, and is in the redo checkpoint too."""
    roots = [Path(root) for root in target.roots if Path(root).is_dir()]
    redo = store.create(session, turn=turn, kind="restore", note=note, conversation=conversation, roots=roots)
    every_root = session_roots(store.checkpoints(session))
    saved = [path for path in planned if read_current(store, path, every_root) != read_from[path]]
    if saved:
        raise CheckpointError(
            f"{', '.join(saved[:10])} changed while the undo was being prepared, so nothing was undone and the new "
            "content stands; undo again to undo the agent's changes in the file as it is now"
        )
    listed = store.git.output(["ls-tree", "-r", "-z", "--name-only", target.tree]).split(b"\0")
    kept_dirs = {os.fsdecode(parent) for name in listed for parent in _parents(name)}
    try:
        for path, data in planned.items():
            _put(store, path, every_root, data)
            if data is None:
                _remove_emptied_dirs(store.workspace, path, kept_dirs)
    except NotAFolder as exc:
        raise CheckpointError(
            f"{path} was not undone: {exc.folder} on the way to it is {'a symbolic link' if exc.is_link else 'a file'}"
            f" now, not a folder, and an undo never writes through one (checkpoint {redo.id} holds the files as they"
            " were before this undo). Make it a folder again, or restore the whole tree, to undo it"
        ) from None
    except OSError as exc:
        raise CheckpointError(
            f"the undo stopped part-way ({exc}); the state before it is checkpoint {redo.id}: restore it with "
            "--whole-tree to go back, or fix the cause and run the same undo again"
        ) from None
    return redo


def undo_agent(
    store: CheckpointStore,
    session: str,
    target_id: str,
    *,
    turn: int,
    dry_run: bool = False,
    is_dirty: Callable[[Path], bool] = lambda _p: False,
    conversation: ConversationMark | None = None,
) -> RestoreReport:
    """Undo every agent change made since checkpoint `target_id`, keeping the person's. Conflicting files are
    left untouched and listed; a redo checkpoint is taken first (restoring it undoes the undo)."""
    target = store.get(session, target_id)
    history, not_undoable = agent_history(store, session, target.id)
    roots = session_roots(store.checkpoints(session))
    planned: dict[str, bytes | None] = {}
    read_from: dict[str, bytes | None] = {}
    conflicts: list[UndoConflict] = []
    for path, history_of_file in history.items():
        current = read_current(store, path, roots)
        try:
            result = undo_file(store.git, current, history_of_file)
        except ChangeConflict as exc:
            conflicts.append(UndoConflict(path=path, reason=str(exc)))
            continue
        if result != current:
            planned[path], read_from[path] = result, current
    changes = [FileChange(path=p, action="remove" if data is None else "write") for p, data in planned.items()]
    dirty = [c.path for c in changes if is_dirty(absolute_path(store, c.path))]
    if dirty:
        raise CheckpointError(
            "these files have unsaved changes in the editor, and the undo would overwrite them: "
            + ", ".join(dirty[:10])
            + "; save or revert them, then undo again"
        )
    report = RestoreReport(target=target.id, redo=None, changes=changes, conflicts=conflicts, not_undoable=not_undoable)
    if dry_run:
        diff = "".join(_diff(path, read_current(store, path, roots), data) for path, data in planned.items())
        return report.model_copy(update={"diff": diff, "dry_run": True})
    note = f"before undoing the agent's changes since {target.id}"
    redo = write_planned(store, session, target, planned, read_from, turn=turn, note=note, conversation=conversation)
    return report.model_copy(update={"redo": redo.id})


def agent_history(
    store: CheckpointStore, session: str, since: str, *, paths: set[str] | None = None
) -> tuple[dict[str, list[AgentChange]], list[str]]:
    """Each file's agent changes made since checkpoint `since` (of `paths` only, when given), oldest first, and
    the files the agent changed that checkpoints could not capture (not undoable)."""
    spans = agent_spans(store.checkpoints(session), since)
    if paths is not None:
        spans = [(before, after) for before, after in spans if paths.intersection(after.changed)]
    history: dict[str, list[AgentChange]] = {}
    not_undoable: dict[str, None] = {}
    sides = [(_entries_at(store, b, a.changed), _entries_at(store, a, a.changed)) for b, a in spans]
    blobs = read_blobs(store.git, sorted({sha for side in sides for e in side for sha, _link in e.values()}))
    for (before, after), (old, new) in zip(spans, sides, strict=True):
        for path in after.changed:
            if paths is not None and path not in paths:
                continue
            was, now = old.get(path), new.get(path)
            change = AgentChange(
                blobs[was[0]] if was else None,
                blobs[now[0]] if now else None,
                any(e[1] for e in (was, now) if e),
                before.id,
            )
            history.setdefault(path, []).append(change)
        # Not captured after the call, and not as it was before it: the call changed what checkpoints cannot hold.
        not_undoable.update(dict.fromkeys(s.path for s in after.skipped if s not in before.skipped))
    return history, list(not_undoable)


def conflict_message(report: RestoreReport, whole_tree: str) -> str:
    """What the person is told when an undo left files as they are, and what to do about them. `whole_tree`:
    how to restore every file to the checkpoint where they are (a CLI option, a command)."""
    return (
        left_as_they_are(report.conflicts)
        + f". Undo the agent's change there by hand, or restore the whole tree to checkpoint {report.target} "
        f"with {whole_tree} (that also takes back your own edits made since)"
    )


def left_as_they_are(conflicts: Sequence[UndoConflict]) -> str:
    """Which files an undo left as they are, and why: the person changed them where the agent did."""
    if len(conflicts) == 1:
        only = conflicts[0]
        return f"{only.path} was left as it is, because you changed it where the agent did: {only.reason}"
    return f"{len(conflicts)} files were left as they are, because you changed them where the agent did: " + "; ".join(
        f"{c.path}: {c.reason}" for c in conflicts
    )


def absolute_path(store: CheckpointStore, path: str) -> Path:
    return store.workspace / path  # an additional root's path is absolute already


def _entries_at(store: CheckpointStore, checkpoint: Checkpoint, paths: list[str]) -> dict[str, tuple[str, bool]]:
    """Each of `paths` that the checkpoint holds: its blob and whether it is a symbolic link (one `ls-tree` per
    captured root). An absolute path names a file of an additional root."""
    by_tree: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        tree, prefix = checkpoint.tree, ""
        for root, root_tree in checkpoint.roots.items():
            if path.startswith(root + "/"):
                tree, prefix = root_tree, root + "/"
        by_tree.setdefault((tree, prefix), []).append(path.removeprefix(prefix))
    found: dict[str, tuple[str, bool]] = {}
    for (tree, prefix), inside in by_tree.items():
        listed = store.git.output(["--literal-pathspecs", "ls-tree", "-r", "-z", tree, "--", *inside])
        for line in split_z(listed):
            meta, name = line.split(b"\t", 1)
            mode, _kind, sha = meta.decode().split(" ")
            found[prefix + os.fsdecode(name)] = (sha, mode == "120000")
    return found


def session_roots(checkpoints: list[Checkpoint]) -> set[str]:
    """The additional roots the session's checkpoints captured: what an absolute path of theirs is beneath."""
    return {root for checkpoint in checkpoints for root in checkpoint.roots}


def _beneath(store: CheckpointStore, path: str, roots: Collection[str]) -> tuple[Path, bytes]:
    """The root `path` is beneath and its place there: the workspace for a relative path, else the additional
    root it is in (one unknown: its own folder, so that at least its name is never followed)."""
    if not os.path.isabs(path):
        return store.workspace, os.fsencode(path)
    root = next((r for r in roots if path.startswith(r.rstrip("/") + "/")), os.path.dirname(path))
    return Path(root), os.fsencode(os.path.relpath(path, root))


def read_current(store: CheckpointStore, path: str, roots: Collection[str]) -> bytes | None:
    """The file's bytes now (None: there is none), read without following a link on the way. A link, at its
    name or on the way, or a directory there is never equal to a file's bytes: a conflict, left alone."""
    root, inside = _beneath(store, path, roots)
    try:
        folder, name = parent_beneath(root, inside)
    except NotAFolder as exc:
        if exc.is_link:
            return b"\0symlink on the way: " + os.fsencode(exc.folder)
        return None  # a file where a folder was: the file is gone
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            return b"\0symlink" + os.readlink(name, dir_fd=folder)
        if stat.S_ISDIR(info.st_mode):
            return b"\0directory"
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        return None
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _put(store: CheckpointStore, path: str, roots: Collection[str], data: bytes | None) -> None:
    """Write (None: remove) the file without following a link: one at its name is replaced, one on the way
    refuses (NotAFolder), since the person may have made it; a missing folder is made."""
    root, inside = _beneath(store, path, roots)
    if data is None:
        remove_file_beneath(root, inside)
    else:
        write_files_beneath(root, [FileBeneath(inside, data)], folders="create")


def _parents(name: bytes) -> list[bytes]:
    found: list[bytes] = []
    while name := os.path.dirname(name):
        found.append(name)
    return found


def _remove_emptied_dirs(root: Path, path: str, kept_dirs: set[str]) -> None:
    """Directories that only held files the agent created go with them (as with a whole-tree restore)."""
    if os.path.isabs(path):
        return  # an additional root's: left as it is
    for parent in (os.fsdecode(p) for p in _parents(os.fsencode(path))):
        if parent in kept_dirs:
            return
        try:
            remove_empty_folder_beneath(root, os.fsencode(parent))
        except OSError:
            return  # not empty: it holds someone's files


def _diff(path: str, old: bytes | None, new: bytes | None) -> str:
    def lines(data: bytes | None) -> list[str]:
        return (data or b"").decode("utf-8", "replace").splitlines(keepends=True)

    return "".join(difflib.unified_diff(lines(old), lines(new), f"a/{path}", f"b/{path}"))
