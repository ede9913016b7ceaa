"""Bring a session's shadow index up to date with the files on disk, and write it as a tree.

The cost of an unchanged tree is the two passes `git status` makes (untracked files, then the stat cache of
tracked ones); only what changed is read and hashed. Paths stay bytes end to end (`-z`), so names with a
newline or bytes that are not UTF-8 are captured like any other.
"""

from __future__ import annotations

import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.checkpoints.git import ShadowGit, split_z
from toolgate.checkpoints.models import CheckpointError, SkippedFile
from toolgate.checkpoints.staging import RACY_NS, WorkFile, read_work_file, stage
from toolgate.checkpoints.tree_edit import edited_tree

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
# More changed paths than this (a first capture, a checkout, a generator's output): git reads and hashes them
# itself and refreshes its stat cache; fewer (a tool call's few files) are staged in-process (see staging).
IN_PROCESS_MAX = 100
_UNREADABLE_DIR = re.compile(rb"could not open directory '(.*)': ")


@dataclass(frozen=True, slots=True)
class Captured:
    tree: str
    skipped: list[SkippedFile] = field(default_factory=list)
    base: str | None = None  # the tree the index held before
    changed: list[bytes] | None = None  # the paths that differ from `base` (None: a fresh index, no base)


def _display(path: bytes) -> str:
    return os.fsdecode(path)


def _nested_repository_files(git: ShadowGit, index: Path, directory: bytes) -> list[bytes]:
    """The files of a nested repository git listed as one `dir/` entry: its files, not a gitlink, minus what the
    ignore rules exclude (the first capture only; after that git walks into it itself)."""
    root = os.fsencode(git.work_tree)
    found: list[bytes] = []
    for top, dirs, files in os.walk(os.path.join(root, directory.rstrip(b"/"))):
        dirs[:] = [d for d in dirs if d != b".git"]
        for name in files:
            found.append(os.path.relpath(os.path.join(top, name), root))
        for name in dirs:
            if os.path.islink(os.path.join(top, name)):
                found.append(os.path.relpath(os.path.join(top, name), root))
    if not found:
        return []
    ignored = git.run(
        ["check-ignore", "-z", "--stdin", "--no-index"], index=index, stdin=b"\0".join(found) + b"\0", check=False
    )
    dropped = set(split_z(ignored.stdout))
    return [path for path in found if path not in dropped]


def _classify(git: ShadowGit, path: bytes, max_bytes: int) -> SkippedFile | None:
    full = os.path.join(os.fsencode(git.work_tree), path)
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        return None  # deleted: `update-index --remove` drops it
    except OSError:
        return SkippedFile(path=_display(path), reason="unreadable")
    if stat.S_ISLNK(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        return SkippedFile(path=_display(path), reason="not_a_file")
    if info.st_size > max_bytes:
        return SkippedFile(path=_display(path), reason="too_large", size=info.st_size)
    if not os.access(full, os.R_OK):
        return SkippedFile(path=_display(path), reason="unreadable", size=info.st_size)
    return None


def _update(git: ShadowGit, index: Path, paths: list[bytes]) -> list[SkippedFile]:
    """`update-index` the paths in one go; if one of them fails (it changed under us), one at a time."""
    if not paths:
        return []
    args = ["update-index", "--add", "--remove", "-z", "--stdin"]
    if git.run(args, index=index, stdin=b"\0".join(paths) + b"\0", check=False).returncode == 0:
        return []
    skipped: list[SkippedFile] = []
    for path in paths:
        if git.run(args, index=index, stdin=path + b"\0", check=False).returncode != 0:
            _forget(git, index, [path])
            skipped.append(SkippedFile(path=_display(path), reason="vanished"))
    return skipped


def _forget(git: ShadowGit, index: Path, paths: list[bytes]) -> None:
    if paths:
        git.output(["update-index", "--force-remove", "-z", "--stdin"], index=index, stdin=b"\0".join(paths) + b"\0")


def capture(
    git: ShadowGit, index: Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, index_tree: str | None = None
) -> Captured:
    """Update `index` from the work tree and return the tree it describes, with what could not be captured.
    `index_tree`: the tree the index held when it was last written; when nothing changed, that is the answer
    and no tree is written."""
    # The two passes `git status` makes: untracked files, then the stat cache of tracked ones (with the blob
    # each had, so that what really changed is known without comparing trees afterwards).
    # They run side by side: neither changes the index.
    tracked = git.start(["diff-files", "-z", "--raw", "--no-renames"], index=index)
    try:
        skipped, untracked = _untracked(git, index)
    except BaseException:
        tracked.stop()
        raise
    was = _stat_changed(tracked.finish().stdout)
    changed_tracked = set(was)

    keep: list[bytes] = []
    drop: list[bytes] = []
    for path in dict.fromkeys([*untracked, *sorted(changed_tracked)]):
        problem = _classify(git, path, max_file_bytes)
        if problem is None:
            keep.append(path)
        else:
            skipped.append(problem)
            if path in changed_tracked:
                drop.append(path)  # it was captured before; it is not now
    _forget(git, index, drop)
    if index_tree is None or len(keep) > IN_PROCESS_MAX:
        failed = _update(git, index, keep)
        skipped += failed
        # Fresh stat data after a large update: files written in the same second as the index are "racily
        # clean", and every later listing would read them all again.
        git.run(["update-index", "-q", "--refresh"], index=index, check=False)
        lost = {os.fsencode(s.path) for s in failed}
        added = [p for p in keep if p not in lost]
        # Added and removed files changed for sure; one whose stat data changed may still hold the same bytes.
        found = {
            *(p for p in added if p not in was or _differs(git, p, was[p], max_file_bytes)),
            *(lost & changed_tracked),
        }
        index_changed = bool(keep)
        made = None
    else:
        staged = stage(git, index, keep, was, max_file_bytes)
        skipped += staged.skipped
        if staged.settled:
            # Unchanged files whose mtime is no longer racy: git takes their stat data (only where the bytes
            # are still what the index holds) and stops listing them.
            git.run(["update-index", "-q", "--refresh"], index=index, check=False)
        unstaged = {os.fsencode(s.path) for s in staged.skipped}
        added = [p for p in keep if p not in unstaged]
        found = set(staged.changed)
        index_changed = bool(found)
        # The index is the last tree plus these entries: the new tree is made from that one, in-process.
        made = edited_tree(git, index_tree, staged.entries) if found and not drop else None
    base = index_tree
    if made is not None:
        index_tree = made
    elif index_changed or drop or index_tree is None:
        index_tree = git.output(["write-tree"], index=index).decode().strip()
    skipped += _special_files(git, index, _directories(git, index_tree, base, added))
    changed = sorted({*found, *drop})
    return Captured(tree=index_tree, skipped=skipped, base=base, changed=changed if base is not None else None)


def _untracked(git: ShadowGit, index: Path) -> tuple[list[SkippedFile], list[bytes]]:
    """The files the index does not hold (a nested repository's one by one), and the directories git could not
    read, which are recorded as skipped."""
    others = git.run(["ls-files", "-z", "--others", "--exclude-standard"], index=index, check=False)
    if others.returncode != 0:
        detail = others.stderr.decode("utf-8", "replace").strip()
        raise CheckpointError(f"the files of {git.work_tree} could not be listed: {detail}")
    skipped = [
        SkippedFile(path=_display(m.group(1)).rstrip("/"), reason="unreadable")
        for m in _UNREADABLE_DIR.finditer(others.stderr)
    ]
    untracked: list[bytes] = []
    for path in split_z(others.stdout):
        untracked += _nested_repository_files(git, index, path) if path.endswith(b"/") else [path]
    return skipped, untracked


def _stat_changed(raw: bytes) -> dict[bytes, tuple[str, str]]:
    """`diff-files --raw -z`: each path whose stat data changed, with the mode and blob the index holds."""
    parts = raw.split(b"\0")
    found: dict[bytes, tuple[str, str]] = {}
    for header, path in zip(parts[0::2], parts[1::2], strict=False):
        if header.startswith(b":"):
            old_mode, _new_mode, old_blob, _new_blob, _status = header[1:].decode().split(" ")
            found[path] = (old_mode, old_blob)
    return found


def _differs(git: ShadowGit, path: bytes, indexed: tuple[str, str], max_bytes: int) -> bool:
    """Whether the file at `path` is not the blob (and mode) the index held."""
    found = read_work_file(git.work_tree, path, max_bytes)
    return not isinstance(found, WorkFile) or (found.mode, found.blob) != indexed


_DIRECTORY_CACHE: dict[tuple[ShadowGit, str], tuple[bytes, ...]] = {}


def _directories(git: ShadowGit, tree: str, base: str | None, added: list[bytes]) -> tuple[bytes, ...]:
    """The directories a tree holds files in: cached per tree, so an unchanged tree costs nothing here, and a
    tree made from `base` by adding files costs no listing either. (A directory emptied since may stay in the
    list; looking into it finds nothing.)"""
    found = _DIRECTORY_CACHE.get((git, tree))
    if found is not None:
        return found
    previous = _DIRECTORY_CACHE.get((git, base)) if base is not None else None
    if previous is not None:
        grown = dict.fromkeys(previous)
        for path in added:
            directory = os.path.dirname(path)
            while directory and directory not in grown:
                grown[directory] = None
                directory = os.path.dirname(directory)
        found = tuple(grown)
    else:
        listing = git.output(["ls-tree", "-r", "-d", "-z", "--name-only", tree])
        found = (b"", *split_z(listing))
    if len(_DIRECTORY_CACHE) >= 64:
        _DIRECTORY_CACHE.pop(next(iter(_DIRECTORY_CACHE)))
    _DIRECTORY_CACHE[(git, tree)] = found
    return found


# A directory's special files, by its full path: (mtime_ns, inode, names). Adding, removing or renaming an
# entry changes a directory's mtime, so a directory whose mtime is as it was holds the same kinds of entries.
_SPECIAL_CACHE: dict[bytes, tuple[int, int, tuple[bytes, ...]]] = {}


def _special_files(git: ShadowGit, index: Path, directories: tuple[bytes, ...]) -> list[SkippedFile]:
    """FIFOs, sockets and devices beside captured files. git passes over them in silence; we say so. Only the
    directories that hold captured files are looked at, and only those whose mtime changed are read again."""
    root = os.fsencode(git.work_tree)
    found: list[bytes] = []
    now = time.time_ns()
    if len(_SPECIAL_CACHE) > 200_000:
        _SPECIAL_CACHE.clear()
    for directory in directories:
        full = os.path.join(root, directory) if directory else root
        try:
            info = os.stat(full)
        except OSError:
            continue
        cached = _SPECIAL_CACHE.get(full)
        if cached is not None and cached[:2] == (info.st_mtime_ns, info.st_ino):
            names = cached[2]
        else:
            try:
                names = _special_entries(full)
            except OSError:
                continue
            if now - info.st_mtime_ns > RACY_NS:  # older: no change made in its clock tick is yet to show
                _SPECIAL_CACHE[full] = (info.st_mtime_ns, info.st_ino, names)
        found += [os.path.join(directory, name) if directory else name for name in names]
    if not found:
        return []
    ignored = git.run(
        ["check-ignore", "-z", "--stdin", "--no-index"], index=index, stdin=b"\0".join(found) + b"\0", check=False
    )
    dropped = set(split_z(ignored.stdout))
    return [SkippedFile(path=_display(path), reason="not_a_file") for path in sorted(found) if path not in dropped]


def _special_entries(directory: bytes) -> tuple[bytes, ...]:
    with os.scandir(directory) as entries:
        return tuple(
            entry.name
            for entry in entries
            if not (entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False) or entry.is_symlink())
        )
