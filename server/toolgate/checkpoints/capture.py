"""Bring a session's shadow index up to date with the files on disk, and write it as a tree.

The cost of an unchanged tree is the two passes `git status` makes (untracked files, then the stat cache of
tracked ones); only what changed is read and hashed. Paths stay bytes end to end (`-z`), so names with a
newline or bytes that are not UTF-8 are captured like any other.
"""

from __future__ import annotations

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


def capture(git: ShadowGit, index: Path, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> Captured:
    """Update `index` from the work tree and return the tree it describes, with what could not be captured."""
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
    candidates += split_z(git.output(["diff-files", "-z", "--name-only", "--no-renames"], index=index))

    keep: list[bytes] = []
    drop: list[bytes] = []
    for path in dict.fromkeys(candidates):
        problem = _classify(git, path, max_file_bytes)
        if problem is None:
            keep.append(path)
        else:
            skipped.append(problem)
            drop.append(path)
    _forget(git, index, drop)
    skipped += _update(git, index, keep)
    tree = git.output(["write-tree"], index=index).decode().strip()
    return Captured(tree=tree, skipped=skipped)
