"""A few changed files into a session's shadow index with one git process and one pass over each file.

`git update-index --add` would read and hash each file (and compress it), and every index write after it reads
and hashes it again while its mtime is in the same second as the index's ("racily clean": this git keeps
seconds only), as does every listing until an index is written in a later second: five or six passes over a 5 MB
file a tool just wrote. Here each file is read once, its blob id computed in-process, and only new content is
stored (as a loose object, like git's own); the index learns the entries from `update-index --index-info`, which
hashes nothing. Such an entry has no stat data, so the next listing names it again at the cost of a stat, and its
bytes are compared here (a file the person changed behind the guard's back is captured like any other); once
its mtime is old enough not to be racy, git takes its stat data (one pass) and it is listed no more.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from toolgate.checkpoints.git import ShadowGit, object_id, write_object
from toolgate.checkpoints.models import SkippedFile
from toolgate.checkpoints.tree_edit import Entry
from toolgate.core.beneath import parent_beneath

_REMOVED = b"0 " + b"0" * 40  # --index-info's way of saying "no such entry"
# An mtime this recent may share its second with the index written next; git would then read the file again at
# every listing, so its stat data waits (the same margin as the special-file cache's).
RACY_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class WorkFile:
    """A path as git would store it: its mode ("100644", "100755", "120000") and bytes (a link's target)."""

    mode: str
    data: bytes
    mtime_ns: int

    @property
    def blob(self) -> str:
        return object_id("blob", self.data)


def read_work_file(work_tree: Path, path: bytes, max_bytes: int) -> WorkFile | SkippedFile | None:
    """The file at `path` as git would hash it (info/attributes turns every conversion off), a reason it cannot
    be captured, or None when it is gone. Never follows a link: a link swapped in is stored as a link, and a file
    beyond one (a folder on its way replaced by a link) is gone, as git sees it: what is there is elsewhere."""
    shown = os.fsdecode(path)
    try:
        parent, name = parent_beneath(work_tree, path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return None if exc.errno == errno.ELOOP else SkippedFile(path=shown, reason="vanished")
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            return WorkFile("120000", os.readlink(name, dir_fd=parent), info.st_mtime_ns)
        if not stat.S_ISREG(info.st_mode):
            return SkippedFile(path=shown, reason="not_a_file")
        if info.st_size > max_bytes:
            return SkippedFile(path=shown, reason="too_large", size=info.st_size)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError:
        return SkippedFile(path=shown, reason="vanished")  # changed kind or became unreadable since it was listed
    finally:
        os.close(parent)
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(handle.fileno())
        data = handle.read(max_bytes + 1)
    if not stat.S_ISREG(opened.st_mode) or opened.st_ino != info.st_ino:
        return SkippedFile(path=shown, reason="vanished")
    if len(data) > max_bytes:
        return SkippedFile(path=shown, reason="too_large", size=len(data))
    return WorkFile("100755" if opened.st_mode & stat.S_IXUSR else "100644", data, opened.st_mtime_ns)


@dataclass(slots=True)
class Staged:
    changed: list[bytes] = field(default_factory=list)  # now differs from the entry the index held (or had none)
    skipped: list[SkippedFile] = field(default_factory=list)
    settled: list[bytes] = field(default_factory=list)  # unchanged, and old enough for git to take its stat data
    entries: dict[bytes, Entry] = field(default_factory=dict)  # what the index was told: (mode, blob) or removed


def stage(
    git: ShadowGit, index: Path, paths: list[bytes], indexed: dict[bytes, tuple[str, str]], max_bytes: int
) -> Staged:
    """Bring the entries of `paths` in line with the files (`indexed`: the mode and blob of those the index
    holds). Raises CheckpointError when git refuses the entries (the caller starts the index afresh)."""
    staged = Staged()
    removals: list[bytes] = []
    entries: list[bytes] = []
    now = time.time_ns()
    for path in paths:
        found = read_work_file(git.work_tree, path, max_bytes)
        if not isinstance(found, WorkFile):
            if found is not None:
                staged.skipped.append(found)
            if path in indexed:
                removals.append(_REMOVED + b"\t" + path)
                staged.changed.append(path)
                staged.entries[path] = None
            continue
        blob = found.blob
        if indexed.get(path) == (found.mode, blob):
            if now - found.mtime_ns > RACY_NS:
                staged.settled.append(path)
            continue
        write_object(git, "blob", found.data, blob)
        entries.append(f"{found.mode} {blob}".encode() + b"\t" + path)
        staged.changed.append(path)
        staged.entries[path] = (found.mode, blob)
    if removals or entries:
        # Removals first: a file that replaced a directory (or the other way round) then finds its place free.
        lines = b"\0".join([*removals, *entries]) + b"\0"
        git.output(["update-index", "--add", "--replace", "-z", "--index-info"], index=index, stdin=lines)
    return staged
