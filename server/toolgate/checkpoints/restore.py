"""Put a checkpoint's files back: changed files get their old bytes and mode, files created since go, files
deleted since come back.

A restore first checkpoints the current tree (its redo point), then applies the difference between that tree
and the target's. Applying is idempotent, so a restore that was killed half-way is finished by running it
again. Paths come from git trees (no `..`, no `.git`), and every folder on the way is opened from the one before
it without following a link (core.beneath), so a restore never follows a symlink that was swapped in, even while
it runs, and never leaves the captured root.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolgate.checkpoints.git import read_blobs, split_z
from toolgate.checkpoints.models import (
    ChangeAction,
    Checkpoint,
    CheckpointError,
    ConversationMark,
    FileChange,
    RestoreReport,
    SkippedFile,
)
from toolgate.checkpoints.staging import read_work_file
from toolgate.checkpoints.store import CheckpointStore
from toolgate.core.atomic_file import FileBeneath, remove_file_beneath, write_files_beneath
from toolgate.core.beneath import parent_beneath, remove_empty_folder_beneath

_LINK = "120000"
_EXECUTABLE = "100755"


@dataclass(frozen=True, slots=True)
class _Entry:
    path: bytes
    mode: str  # the target's mode; "000000" when the target has no such file
    blob: str
    was: tuple[str, str]  # the mode and blob the tree restored from holds ("000000": none)


@dataclass(frozen=True, slots=True)
class _Side:
    """One captured root of a restore: the workspace (`prefix` empty: its paths are shown relative) or an
    additional directory (shown absolute)."""

    root: Path
    prefix: str
    current: str  # its tree now
    target: str  # its tree at the checkpoint
    entries: list[_Entry]

    def change(self, entry: _Entry) -> FileChange:
        action = _action(entry)
        return action.model_copy(update={"path": self.prefix + action.path}) if self.prefix else action


def _plan(store: CheckpointStore, current_tree: str, target_tree: str) -> list[_Entry]:
    raw = store.git.output(["diff-tree", "-r", "-z", "--no-renames", current_tree, target_tree])
    parts = raw.split(b"\0")
    entries: list[_Entry] = []
    for header, path in zip(parts[0::2], parts[1::2], strict=False):
        if not header.startswith(b":"):
            continue
        old_mode, new_mode, old_blob, new_blob, _status = header[1:].decode().split(" ")
        entries.append(_Entry(path, new_mode, new_blob, (old_mode, old_blob)))
    return entries


def _action(entry: _Entry) -> FileChange:
    action: ChangeAction = "remove" if entry.mode == "000000" else "link" if entry.mode == _LINK else "write"
    return FileChange(path=os.fsdecode(entry.path), action=action)


def _remove(root: bytes, entry: _Entry, kept_dirs: set[bytes]) -> None:
    # A folder on the way that is no longer a folder (or is a link) means the file is already gone from here.
    with contextlib.suppress(NotADirectoryError, IsADirectoryError):  # a directory took its place: it stays
        remove_file_beneath(Path(os.fsdecode(root)), entry.path)
    # Directories that only held files created since go with them.
    directory = os.path.dirname(entry.path)
    while directory and directory not in kept_dirs:
        try:
            remove_empty_folder_beneath(root, directory)
        except OSError:
            break
        directory = os.path.dirname(directory)


def _make_room(root: bytes, entry: _Entry, link_target: bytes | None) -> None:
    """Real folders on the way to `entry` (a link or a file in the way is removed: it was not there at the
    checkpoint, or git would have listed it), and nothing in its place that a write would go through or fail on;
    a link entry is written here (`link_target`), a file's bytes come in the batch (`_write_files`)."""
    folder, name = parent_beneath(root, entry.path, folders="replace")
    try:
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                os.rmdir(name, dir_fd=folder)  # only empty directories: one with files is refused by the OSError
        if link_target is not None:
            temp = b".toolgate-restore-link"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder)
            os.symlink(link_target, temp, dir_fd=folder)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        os.close(folder)


def _write_files(root: bytes, files: list[tuple[_Entry, bytes]]) -> None:
    """Regular files, all in one batch beneath the root (see `write_files_beneath`: no folder on the way is
    followed if it became a link since `_make_room`, it is made a real folder again), each with the executable
    bit the checkpoint has. A new file gets 0o666 minus the umask, as open() gives it."""
    batch = [FileBeneath(entry.path, data, executable=entry.mode == _EXECUTABLE) for entry, data in files]
    write_files_beneath(Path(os.fsdecode(root)), batch, folders="replace")


def restore(
    store: CheckpointStore,
    session: str,
    target_id: str,
    *,
    turn: int,
    dry_run: bool = False,
    is_dirty: Callable[[Path], bool] = lambda _p: False,
    before_apply: Callable[[FileChange], None] | None = None,
    conversation: ConversationMark | None = None,
) -> RestoreReport:
    """Restore the files of checkpoint `target_id`. `is_dirty` names files with unsaved editor changes: if any
    file the restore would touch is one, nothing is done. `before_apply` is called before each file (tests).
    `conversation`: where the transcript stands now, for the redo checkpoint."""
    target = store.get(session, target_id)
    roots = [Path(root) for root in target.roots if Path(root).is_dir()]  # one removed since is left alone
    # One capture under one hold of the lock is both what the plan starts from and the redo checkpoint: the
    # files are listed and read once, and the redo holds exactly the tree the restore changes.
    with store.locked():
        captured = store.capture(session)
        extra = store.capture_roots(session, roots)
        sides = [_side(store, None, captured.tree, target.tree, target)]
        # A root that resolves elsewhere now (its directory replaced by a link) is not the one captured: left alone.
        sides += [
            _side(store, Path(root), c.tree, target.roots[root], target)
            for root, c in extra.items()
            if root in target.roots
        ]
        changes = [side.change(entry) for side in sides for entry in side.entries]
        dirty = [c.path for c in changes if is_dirty(store.workspace / c.path)]  # an absolute path stays one
        if dirty:
            raise CheckpointError(
                f"these files have unsaved changes in the editor, and a restore would overwrite them: {_names(dirty)}; "
                "save or revert them, then restore again"
            )
        if dry_run:
            patch = b"".join(_diff(store, side) for side in sides)
            return RestoreReport(
                target=target.id, redo=None, changes=changes, diff=patch.decode("utf-8", "replace"), dry_run=True
            )
        redo = store.record(
            session,
            captured,
            extra,
            turn=turn,
            kind="restore",
            note=f"before restoring to {target.id}",
            conversation=conversation,
        )
    _refuse_changed_since(store, sides, redo)
    try:
        for side in sides:
            _apply(store, side, before_apply)
    except OSError as exc:
        raise CheckpointError(
            f"the restore to {target.id} stopped part-way ({exc}); the state before it is checkpoint {redo.id}. "
            "Fix the cause and run the same restore again to finish it"
        ) from None
    return RestoreReport(target=target.id, redo=redo.id, changes=changes)


def _side(store: CheckpointStore, root: Path | None, current: str, target_tree: str, target: Checkpoint) -> _Side:
    prefix = "" if root is None else os.fsdecode(root) + "/"
    # A file skipped at the checkpoint (too large, unreadable) is not in its tree, yet must not be removed.
    skipped = {os.fsencode(s.path.removeprefix(prefix)) for s in target.skipped if s.path.startswith(prefix)}
    entries = [e for e in _plan(store, current, target_tree) if not (e.mode == "000000" and e.path in skipped)]
    return _Side(root or store.workspace, prefix, current, target_tree, entries)


def _refuse_changed_since(store: CheckpointStore, sides: list[_Side], redo: Checkpoint) -> None:
    """Raise, before anything is written, when a file the restore would replace or remove is no longer what the
    redo checkpoint holds: the person changed it since (their edit is in no checkpoint, so it must not be
    overwritten). A file the checkpoint could not capture (too large, unreadable) is not compared, as before."""
    changed: list[str] = []
    for side in sides:
        for entry in side.entries:
            found = read_work_file(side.root, entry.path, store.settings.max_file_bytes)
            if isinstance(found, SkippedFile):
                continue
            expected = None if entry.was[0] == "000000" else entry.was
            if (None if found is None else (found.mode, found.blob)) != expected:
                changed.append(side.change(entry).path)
    if changed:
        raise CheckpointError(
            "these files changed while the restore was starting, and it would have overwritten that change: "
            f"{_names(changed)}; nothing was restored (checkpoint {redo.id} holds the files as they were just "
            "before). Restore again once they are as you want them"
        )


def _names(paths: list[str]) -> str:
    return ", ".join(paths[:10]) + ("…" if len(paths) > 10 else "")


def _diff(store: CheckpointStore, side: _Side) -> bytes:
    prefixes = [f"--src-prefix=a/{side.prefix}", f"--dst-prefix=b/{side.prefix}"] if side.prefix else []
    return store.git.output(["diff", "--no-renames", "--no-color", "--binary", *prefixes, side.current, side.target])


def _apply(store: CheckpointStore, side: _Side, before_apply: Callable[[FileChange], None] | None) -> None:
    root = os.fsencode(side.root)
    removals = sorted((e for e in side.entries if e.mode == "000000"), key=lambda e: -e.path.count(b"/"))
    writes = [e for e in side.entries if e.mode != "000000"]
    if removals:
        target_paths = store.git.output(["ls-tree", "-r", "-z", "--name-only", side.target])
        kept_dirs = {os.path.dirname(p) for p in split_z(target_paths)}
        kept_dirs |= {d for p in list(kept_dirs) for d in _ancestors(p)}
        for entry in removals:
            if before_apply is not None:
                before_apply(side.change(entry))
            _remove(root, entry, kept_dirs)
    blobs = read_blobs(store.git, [e.blob for e in writes])
    files: list[tuple[_Entry, bytes]] = []
    for entry in writes:
        if before_apply is not None:
            before_apply(side.change(entry))
        link = entry.mode == _LINK
        _make_room(root, entry, blobs[entry.blob] if link else None)
        if not link:
            files.append((entry, blobs[entry.blob]))
    _write_files(root, files)


def compare(store: CheckpointStore, session: str, from_id: str, to_id: str) -> tuple[list[FileChange], str]:
    """What changed from checkpoint `from_id` to `to_id` (a turn: its start to its end): the files, as what
    `to_id` has for each, and a unified diff (additional roots included)."""
    start, end = store.get(session, from_id), store.get(session, to_id)
    sides = [_Side(store.workspace, "", start.tree, end.tree, _plan(store, start.tree, end.tree))]
    for root, tree in end.roots.items():
        before = start.roots.get(root)
        if before is not None and before != tree:
            sides.append(_Side(Path(root), root + "/", before, tree, _plan(store, before, tree)))
    changes = [side.change(entry) for side in sides for entry in side.entries]
    return changes, b"".join(_diff(store, side) for side in sides).decode("utf-8", "replace")


def file_at(store: CheckpointStore, session: str, checkpoint_id: str, path: str) -> bytes | None:
    """A file's bytes at a checkpoint (a link's target for a symlink); None when it had no such file. An
    absolute path names a file of an additional root."""
    checkpoint = store.get(session, checkpoint_id)
    tree, inside = checkpoint.tree, path
    for root, root_tree in checkpoint.roots.items():
        if path.startswith(root + "/"):
            tree, inside = root_tree, path.removeprefix(root + "/")
    found = store.git.run(["cat-file", "blob", f"{tree}:{inside}"], check=False)
    return found.stdout if found.returncode == 0 else None


def _ancestors(path: bytes) -> list[bytes]:
    found: list[bytes] = []
    while path:
        found.append(path)
        path = os.path.dirname(path)
    return found
