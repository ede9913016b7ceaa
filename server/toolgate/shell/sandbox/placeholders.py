"""Empty directories standing in for absent protected files (`.envrc`, `.mcp.json`) while a sandboxed command
runs (a directory, because git ignores an empty one: an empty file would be committed by `git add -A`).

bubblewrap needs a mount point for the empty read-only stand-in, and it is in the user's workspace, so it lives
only as long as the commands that mount on it: made just before a command, removed right after the
last command using it ended (a background command keeps it until it is stopped or the session ends). Removing
it earlier would lift the mount inside a sandbox still running. Only the very directory made here is removed,
and only while still empty: one the user put something in meanwhile (from outside any sandbox) is left alone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable
from pathlib import Path

_USERS: dict[Path, set[int]] = {}  # placeholder -> the launches mounting on it
_IDENTITY: dict[Path, tuple[int, int]] = {}  # placeholder -> (device, inode) of the directory made here
_TOKENS = itertools.count(1)


def acquire(paths: Iterable[Path]) -> int:
    """Make the absent ones (empty directories) and note this launch as a user of all; returns its token.
    An `OSError` leaves nothing behind."""
    token = next(_TOKENS)
    try:
        for path in paths:
            if path in _USERS:
                _USERS[path].add(token)
                continue
            try:
                path.mkdir()
            except FileExistsError:
                continue  # made meanwhile from outside: it is mounted read-only as it is, and never removed
            info = os.lstat(path)
            _USERS[path] = {token}
            _IDENTITY[path] = (info.st_dev, info.st_ino)
    except OSError:
        release(token)
        raise
    return token


def release(token: int) -> None:
    """This launch's command ended: remove each placeholder no other running command mounts on."""
    for path in [p for p, users in _USERS.items() if token in users]:
        users = _USERS[path]
        users.discard(token)
        if users:
            continue
        del _USERS[path]
        identity = _IDENTITY.pop(path)
        with contextlib.suppress(OSError):  # rmdir fails on a directory someone put something in
            info = os.lstat(path)
            if (info.st_dev, info.st_ino) == identity:
                path.rmdir()


def in_use() -> list[Path]:
    return list(_USERS)
