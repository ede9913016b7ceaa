"""Empty files standing in for absent protected files (`.envrc`, `.mcp.json`) while a sandboxed command runs.

bubblewrap needs a file to mount the empty read-only stand-in on, and that file is in the user's workspace, so
it lives only as long as the commands that mount on it: made just before a command, removed right after the
last command using it ended (a background command keeps it until it is stopped or the session ends). Removing
it earlier would lift the mount inside a sandbox still running. Only the very file made here is removed, and
only while still empty: one the user wrote into meanwhile (from outside any sandbox) is left alone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterable
from pathlib import Path

_USERS: dict[Path, set[int]] = {}  # placeholder -> the launches mounting on it
_IDENTITY: dict[Path, tuple[int, int]] = {}  # placeholder -> (device, inode) of the file made here
_TOKENS = itertools.count(1)


def acquire(paths: Iterable[Path]) -> int:
    """Make the absent ones (empty, read-only) and note this launch as a user of all; returns its token.
    An `OSError` leaves nothing behind."""
    token = next(_TOKENS)
    made: list[Path] = []
    try:
        for path in paths:
            if path in _USERS:
                _USERS[path].add(token)
                continue
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
            except FileExistsError:
                continue  # made meanwhile from outside: it is mounted read-only as it is, and never removed
            info = os.fstat(fd)
            os.close(fd)
            made.append(path)
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
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if (info.st_dev, info.st_ino) == identity and info.st_size == 0:
                path.unlink()


def in_use() -> list[Path]:
    return list(_USERS)
