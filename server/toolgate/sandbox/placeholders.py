"""Empty directories standing in for absent protected paths (`.vscode/`, `.git/`, `.envrc`, `.mcp.json`) while
sandboxed commands run. A directory for a protected file too, because git ignores an empty one: an empty file
would be committed by `git add -A`.

bubblewrap needs a mount point for the empty read-only stand-in, and it is in the user's workspace, so it lives
only as long as the commands that mount on it: made just before a command, removed soon after the last command
using it ended (a background command keeps it until it is stopped or the session ends). Removing it earlier
would lift the mount inside a sandbox still running. Only the very directory made here is removed, and only
while still empty: one the user put something in meanwhile (from outside any sandbox) is left alone.

Making and removing them is slow (a millisecond or two each, a dozen per command), so `release` hands them to a
cleaner thread, which removes them once no command has used them for `IDLE_S`: the commands of one turn reuse
them, and the command's result never waits. The cleaner
takes `LOCK` for each removal and the launcher holds it from the plan to `acquire`, so a placeholder a new
command is about to mount on is claimed again, never removed under it. Every one is recorded in this machine's
ledger (ledger.py) before it is made, so one a killed process left is removed by the next one to start.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path

from toolgate.sandbox import ledger

LOCK = threading.RLock()
_USERS: dict[Path, set[int]] = {}  # placeholder -> the launches mounting on it (empty: to be removed)
_IDENTITY: dict[Path, ledger.Identity] = {}  # placeholder -> (device, inode) of the directory made here
# placeholder -> its change time when made or adopted: a file systems reuses a freed inode at once, so the person's
# file put where a stand-in was (rmdir, then write) can carry the stand-in's (device, inode); it cannot carry this.
_CHANGED_NS: dict[Path, int] = {}
_TOKENS = itertools.count(1)
_RELEASED: dict[Path, float] = {}  # placeholder nothing mounts on -> since when (monotonic)
_WAKE = threading.Event()
_cleaner: threading.Thread | None = None
IDLE_S = 1.0
_swept = False
# Who hears that the placeholders that exist changed (the editor's sidecar marks them in the Explorer); called
# with every one that exists now, from whichever thread made or removed one.
_WATCHERS: list[Callable[[list[Path]], None]] = []


def watch(watcher: Callable[[list[Path]], None]) -> Callable[[], None]:
    """Call `watcher` with every placeholder that exists each time that changes; returns what stops it."""
    _WATCHERS.append(watcher)
    return lambda: _WATCHERS.remove(watcher) if watcher in _WATCHERS else None


_announced: list[Path] = []


def _changed() -> None:
    """Tell the watchers, if what exists differs from what they heard last (made, removed, or replaced by the
    person)."""
    global _announced
    with LOCK:
        existing = in_use()
        if existing == _announced:
            return
        _announced = existing
    for watcher in list(_WATCHERS):
        watcher(existing)


def acquire(paths: Iterable[Path], adopt: Mapping[Path, ledger.Identity] | None = None) -> int:
    """Make the absent ones (empty directories) and note this launch as a user of all; returns its token.
    `adopt`: stand-ins another process made (ledger.py) that this launch mounts on too, with their identity.
    An `OSError` leaves nothing behind."""
    token = next(_TOKENS)
    wanted = list(paths)
    adopt = adopt or {}
    with LOCK:
        new = [p for p in wanted if p not in _USERS and (p in adopt or not os.path.lexists(p))]
        if new:  # recorded before they are made: a crash in between leaves nothing unrecorded
            ledger.save({**_IDENTITY, **dict.fromkeys(new)})
        try:
            for path in wanted:
                if path in _USERS:
                    _USERS[path].add(token)  # also one waiting for the cleaner: claimed again, kept
                    _RELEASED.pop(path, None)
                    continue
                if path in adopt and _identity(path) == adopt[path]:
                    _USERS[path] = {token}
                    _IDENTITY[path] = adopt[path]
                    _CHANGED_NS[path] = os.lstat(path).st_ctime_ns
                    continue
                try:
                    path.mkdir()
                except FileExistsError:
                    continue  # made meanwhile from outside: it is mounted read-only as it is, and never removed
                info = os.lstat(path)
                _USERS[path] = {token}
                _IDENTITY[path] = (info.st_dev, info.st_ino)
                _CHANGED_NS[path] = info.st_ctime_ns
        except OSError:
            release(token)
            flush()
            raise
        finally:
            if new:
                ledger.save_soon(_IDENTITY)
    _changed()
    return token


def release(token: int) -> None:
    """This launch's command ended: each placeholder no other running command mounts on is removed soon."""
    global _cleaner
    with LOCK:
        now = time.monotonic()
        for path, users in _USERS.items():
            if token in users:
                users.discard(token)
                if not users:
                    _RELEASED[path] = now
        if not _RELEASED:
            return
        if _cleaner is None or not _cleaner.is_alive():
            _cleaner = threading.Thread(target=_clean_forever, name="toolgate-placeholders", daemon=True)
            _cleaner.start()
    _WAKE.set()


def flush(idle_for: float = 0.0) -> None:
    """Remove every placeholder nothing has mounted on for `idle_for` seconds (0: every unused one, now)."""
    with LOCK:
        unused = [p for p, since in _RELEASED.items() if time.monotonic() - since >= idle_for]
    for path in sorted(unused, key=lambda p: len(p.parts), reverse=True):  # one made inside another first
        _remove(path)
    if unused:
        with LOCK:
            ledger.save(_IDENTITY)
        _changed()


def intact(paths: Iterable[Path], existing: Collection[Path]) -> bool:
    """Whether every one of `paths` made here is still the very directory made (one removed from outside, even if
    made again, no longer carries the sandbox's mount on it). `existing`: what `in_use` answered within the
    caller's hold of `LOCK` (each of them was looked at there: a launch looks at each once)."""
    with LOCK:
        return all(p in existing for p in paths if p in _IDENTITY)


def in_use() -> list[Path]:
    """Every placeholder that exists (mounted, or waiting for the cleaner): the very directory made here, not one
    the person replaced meanwhile (removed it and put the real file there: that is theirs, and protected as such)."""
    with LOCK:
        return [path for path in _USERS if _is_ours(path)]


def _remove(path: Path) -> None:
    with LOCK:
        _RELEASED.pop(path, None)
        if _USERS.get(path) != set():
            return  # claimed again meanwhile, or already removed
        del _USERS[path]
        ours = _is_ours(path)
        identity = _IDENTITY.pop(path)
        _CHANGED_NS.pop(path, None)
        if ledger.others_use(path, identity):
            return  # another toolgate process mounts on it too: the last one removes it
        with contextlib.suppress(OSError):  # rmdir fails on a directory someone put something in
            if ours:
                path.rmdir()


def _is_ours(path: Path) -> bool:
    """Is `path` still the very directory made (or adopted) here: same device and inode, still a directory, and
    unchanged since (an inode number alone is reused at once by a file the person puts there)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and (info.st_dev, info.st_ino) == _IDENTITY.get(path)
        and info.st_ctime_ns == _CHANGED_NS.get(path)
    )


def _identity(path: Path) -> ledger.Identity | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def sweep_once() -> None:
    """At this process's first sandbox start (before its first plan, under `LOCK`): the stand-ins of toolgate
    processes that died are removed."""
    global _swept
    if not _swept:
        _swept = True
        ledger.sweep()


def _clean_forever() -> None:
    while True:
        _WAKE.wait()
        time.sleep(IDLE_S)  # the next command of the same turn claims them again meanwhile
        _WAKE.clear()
        flush(IDLE_S)
        with LOCK:
            if _RELEASED:
                _WAKE.set()  # released during the wait: their turn comes next
