"""Bring a session's shadow index up to date with the files on disk, and write it as a tree.

The cost of an unchanged tree is the two passes `git status` makes (untracked files, then the stat cache of
tracked ones); only what changed is read and hashed. Paths stay bytes end to end (`-z`), so names with a
newline or bytes that are not UTF-8 are captured like any other.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.checkpoints.git import ShadowGit, split_z
from toolgate.checkpoints.models import CheckpointError, SkippedFile

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
_UNREADABLE_DIR = re.compile(rb"could not open directory '(.*)': ")


@dataclass(frozen=True, slots=True)
class Captured:
    tree: str
    skipped: list[SkippedFile] = field(default_factory=list)


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
    # The two passes `git status` makes: untracked files, then the stat cache of tracked ones.
    others = git.run(["ls-files", "-z", "--others", "--exclude-standard"], index=index, check=False)
    if others.returncode != 0:
        detail = others.stderr.decode("utf-8", "replace").strip()
        raise CheckpointError(f"the files of {git.work_tree} could not be listed: {detail}")
    skipped = [
        SkippedFile(path=_display(m.group(1)).rstrip("/"), reason="unreadable")
        for m in _UNREADABLE_DIR.finditer(others.stderr)
    ]
    candidates: list[bytes] = []
    for path in split_z(others.stdout):
        if path.endswith(b"/"):
            candidates += _nested_repository_files(git, index, path)
        else:
            candidates.append(path)
    changed_tracked = set(split_z(git.output(["diff-files", "-z", "--name-only", "--no-renames"], index=index)))
    candidates += changed_tracked

    keep: list[bytes] = []
    drop: list[bytes] = []
    for path in dict.fromkeys(candidates):
        problem = _classify(git, path, max_file_bytes)
        if problem is None:
            keep.append(path)
        else:
            skipped.append(problem)
            if path in changed_tracked:
                drop.append(path)  # it was captured before; it is not now
    _forget(git, index, drop)
    skipped += _update(git, index, keep)
    if index_tree is None or len(keep) > 100:
        # Fresh stat data after a large update: files written in the same second as the index are "racily
        # clean", and every later listing would read them all again (a few just written by a tool cost little).
        git.run(["update-index", "-q", "--refresh"], index=index, check=False)
    if keep or drop or index_tree is None:
        index_tree = git.output(["write-tree"], index=index).decode().strip()
    skipped += _special_files(git, index, _directories(git, index_tree))
    return Captured(tree=index_tree, skipped=skipped)


@functools.lru_cache(maxsize=64)
def _directories(git: ShadowGit, tree: str) -> tuple[bytes, ...]:
    """The directories a tree holds files in (cached per tree: an unchanged tree costs nothing here)."""
    listing = git.output(["ls-tree", "-r", "-d", "-z", "--name-only", tree])
    return (b"", *split_z(listing))


def _special_files(git: ShadowGit, index: Path, directories: tuple[bytes, ...]) -> list[SkippedFile]:
    """FIFOs, sockets and devices beside captured files. git passes over them in silence; we say so. Only the
    directories that hold captured files are looked at (a few scandir calls: no stat per file)."""
    root = os.fsencode(git.work_tree)
    found: list[bytes] = []
    for directory in directories:
        try:
            with os.scandir(os.path.join(root, directory) if directory else root) as entries:
                for entry in entries:
                    if not (entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False)) and not (
                        entry.is_symlink()
                    ):
                        found.append(os.path.join(directory, entry.name) if directory else entry.name)
        except OSError:
            continue
    if not found:
        return []
    ignored = git.run(
        ["check-ignore", "-z", "--stdin", "--no-index"], index=index, stdin=b"\0".join(found) + b"\0", check=False
    )
    dropped = set(split_z(ignored.stdout))
    return [SkippedFile(path=_display(path), reason="not_a_file") for path in sorted(found) if path not in dropped]
