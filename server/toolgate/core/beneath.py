"""Reach a path beneath a root folder without following a symbolic link on the way.

A path resolved by name follows every link in it: a folder the agent (or anyone) swapped for a link to
`~/.ssh` turns "write `dir/authorized_keys` in the workspace" into a write outside it, and checking each folder
with lstat first leaves the window between the check and the write. Here the walk itself is the check: each
folder is opened from the one before it with O_NOFOLLOW, so what the caller gets is a descriptor of a real folder
beneath the root, and everything done through it (`dir_fd=`) stays there whatever is swapped by name later.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Literal

# What the walk does with a folder on the way that is missing, or is a link or a file:
# "existing": neither is made (FileNotFoundError, NotADirectoryError / NotAFolder);
# "create": a missing folder is made, a link or a file refuses (NotAFolder): the person may have put it there;
# "replace": both are made real folders, a link or a file removed (a restore knows a folder was there).
Folders = Literal["existing", "create", "replace"]

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# The folders passed through are opened as paths only (Linux's O_PATH): that needs the permission to pass through
# a folder, not to list it, as resolving the path by name did (a walk from `/` passes `/home`, often 0o711). The
# folder the caller gets is opened for reading: its descriptor is fsynced.
_PASSING_FLAGS = (getattr(os, "O_PATH", 0) or os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class NotAFolder(NotADirectoryError):
    """A folder on the way is a symbolic link or a file: `folder` is its path relative to the root."""

    def __init__(self, folder: bytes, is_link: bool) -> None:
        shown = os.fsdecode(folder)
        what = "a symbolic link" if is_link else "a file"
        super().__init__(errno.ENOTDIR, f"{shown} is {what}, not a folder", shown)
        self.folder = shown
        self.is_link = is_link


def split_beneath(relative: bytes) -> tuple[list[bytes], bytes]:
    """The folders and the name of a '/'-separated path that stays beneath its root (OSError EINVAL otherwise:
    an empty, `.` or `..` part, or an absolute path)."""
    *folders, name = relative.split(b"/")
    if any(part in (b"", b".", b"..") for part in (*folders, name)):
        raise OSError(errno.EINVAL, "the path does not stay beneath its folder", os.fsdecode(relative))
    return folders, name


def parent_beneath(root: Path | bytes, relative: bytes, *, folders: Folders = "existing") -> tuple[int, bytes]:
    """A descriptor of the folder `relative` is in (close it), reached from `root` one folder at a time without
    following a link, and the name in it. The root itself may be a link: it is where the caller stands."""
    steps, name = split_beneath(relative)
    return open_folder_beneath(root, steps, folders=folders), name


def open_folder_beneath(root: Path | bytes, steps: list[bytes], *, folders: Folders = "existing") -> int:
    """A descriptor of the folder `root/steps...`, walked as `parent_beneath` does."""
    passing = _PASSING_FLAGS & ~os.O_NOFOLLOW  # the root itself may be a link
    folder = os.open(root, passing if steps else os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, step in enumerate(steps):
            last = depth == len(steps) - 1
            inner = _open_step(folder, step, b"/".join(steps[: depth + 1]), folders, last)
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder


def _open_step(folder: int, step: bytes, walked: bytes, folders: Folders, last: bool) -> int:
    for _attempt in range(4):  # remove, make, open; something racing us may swap it again: then give up
        try:
            if not last:
                return os.open(step, _PASSING_FLAGS, dir_fd=folder)
            try:
                return os.open(step, _FOLDER_FLAGS, dir_fd=folder)
            except PermissionError:  # writable but not listable: usable all the same, only not fsynced
                return os.open(step, _PASSING_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            if folders == "existing":
                raise
            with contextlib.suppress(FileExistsError):  # made meanwhile: opened (or judged) on the next attempt
                os.mkdir(step, 0o777, dir_fd=folder)
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            try:
                is_link = stat.S_ISLNK(os.stat(step, dir_fd=folder, follow_symlinks=False).st_mode)
            except FileNotFoundError:
                continue
            if folders != "replace":
                raise NotAFolder(walked, is_link) from None
            os.unlink(step, dir_fd=folder)  # removes the link itself, never what it points at
    raise OSError(errno.EAGAIN, "a folder on the way kept changing while it was opened", os.fsdecode(walked))


def remove_empty_folder_beneath(root: Path | bytes, relative: bytes) -> None:
    """Remove the folder at `relative` beneath `root` if it is empty, reached without following a link (a path
    resolved by name would let `rmdir` take an empty folder outside the root through a swapped-in link). OSError
    when it is not empty, missing, or something on the way is not a real folder."""
    folder, name = parent_beneath(root, relative)
    try:
        os.rmdir(name, dir_fd=folder)
    finally:
        os.close(folder)
