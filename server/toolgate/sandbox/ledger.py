"""This machine's record of the stand-ins toolgate made in workspaces, so a process that died without cleaning
up (SIGKILL, a crash, a power loss) does not leave them behind for good: the next sandbox start, in any toolgate
process, removes the leftovers.

`<data root>/sandbox/stand-ins.json` (the data root of session_files.py) holds one entry per stand-in and owner:
its path, the device and inode of the directory, and the owner's pid with the process's start time (a reused
pid is not taken for the owner). Every process rewrites only its own entries, atomically (core/atomic_file.py)
and under a file lock: before it makes a stand-in (the entry has no inode yet), and after (with it: on a thread
of its own, so the command does not wait for the second durable write). A process
that mounts on a stand-in another one made is an owner too, so neither removes it while the other uses it.

A leftover is removed only when every owner is dead and it is still an empty directory with the recorded device
and inode: one the user filled, replaced or made themselves is left alone (its entry is dropped). An entry
without an inode (the owner died between the two writes) is dropped too: nothing proves the directory is ours.
The record is housekeeping, not the boundary: when it cannot be read or written the sandbox still runs (a
warning is logged), with the old risk of a leftover after a crash.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import logging
import os
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from toolgate.core.atomic_file import write_file_atomically
from toolgate.session_files import default_data_root

log = logging.getLogger("toolgate.sandbox")

Identity = tuple[int, int]  # (device, inode)
_THREAD_LOCK = threading.Lock()  # the file lock is per open file; this keeps this process's threads in line


class StandInEntry(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    path: str
    device: int | None = None  # None: recorded just before it was made
    inode: int | None = None
    pid: int
    started: int  # the owner's start time, in clock ticks since boot (/proc/<pid>/stat field 22)

    @property
    def identity(self) -> Identity | None:
        return None if self.device is None or self.inode is None else (self.device, self.inode)

    @property
    def owner(self) -> tuple[int, int]:
        return (self.pid, self.started)


class LedgerFile(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    version: int = 1
    stand_ins: list[StandInEntry] = []


def ledger_path() -> Path:
    return default_data_root() / "sandbox" / "stand-ins.json"


def process_start(pid: int) -> int | None:
    """The start time of a live process (None: no such process, or a zombie, which runs nothing)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # the name in parentheses may hold spaces
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


_ME: tuple[int, int] | None = None


def me() -> tuple[int, int]:
    global _ME
    if _ME is None or _ME[0] != os.getpid():  # a forked child is another owner
        _ME = (os.getpid(), process_start(os.getpid()) or 0)
    return _ME


def _alive(owner: tuple[int, int]) -> bool:
    return process_start(owner[0]) == owner[1]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[LedgerFile]:
    """The ledger, read under the file lock; the caller writes it back with `_write` before leaving."""
    with _THREAD_LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield _read(path)


def _read(path: Path) -> LedgerFile:
    try:
        return LedgerFile.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return LedgerFile()
    except (OSError, ValidationError) as exc:
        log.warning("the sandbox's stand-in record %s is unreadable (%s); starting a new one", path, exc)
        return LedgerFile()


def _write(path: Path, ledger: LedgerFile) -> None:
    write_file_atomically(path, ledger.model_dump_json(indent=1).encode("utf-8"))


def save(mine: Mapping[Path, Identity | None]) -> None:
    """Make this process's entries exactly `mine` (path -> identity; None: about to be made), now."""
    _save(next(_SNAPSHOTS), dict(mine))


def save_soon(mine: Mapping[Path, Identity | None]) -> None:
    """`save`, on a thread of its own: for what only adds certainty (the identities of stand-ins already
    recorded), so the command does not wait for a second durable write (a few ms)."""
    global _writer
    with _PENDING_LOCK:
        _PENDING[:] = [(next(_SNAPSHOTS), dict(mine))]
        if _writer is None or not _writer.is_alive():
            _writer = threading.Thread(target=_write_pending, name="toolgate-stand-in-record", daemon=True)
            _writer.start()
    _PENDING_SET.set()


_SNAPSHOTS = itertools.count(1)  # a snapshot older than the one last written is stale: never written after it
_written = 0
_PENDING: list[tuple[int, dict[Path, Identity | None]]] = []
_PENDING_LOCK = threading.Lock()
_PENDING_SET = threading.Event()
_writer: threading.Thread | None = None


def _write_pending() -> None:
    while True:
        _PENDING_SET.wait()
        with _PENDING_LOCK:
            _PENDING_SET.clear()
            pending = _PENDING[:]
            _PENDING.clear()
        for snapshot, mine in pending:
            _save(snapshot, mine)


def _save(snapshot: int, mine: dict[Path, Identity | None]) -> None:
    global _written
    pid, started = me()
    try:
        path = ledger_path()
        with _locked(path) as ledger:
            if snapshot < _written:
                return  # a newer one is on disk already
            _written = snapshot
            kept = [e for e in ledger.stand_ins if e.owner != (pid, started)]
            for stand_in, identity in mine.items():
                device, inode = identity if identity is not None else (None, None)
                kept.append(StandInEntry(path=str(stand_in), device=device, inode=inode, pid=pid, started=started))
            ledger.stand_ins = kept
            _write(path, ledger)
    except OSError as exc:
        log.warning("could not update the sandbox's stand-in record (%s); a crash now could leave them behind", exc)


def others_use(stand_in: Path, identity: Identity) -> bool:
    """Whether another live process records this very directory as a stand-in it mounts on."""
    try:
        ledger = _read(ledger_path())
    except OSError:
        return True  # unknown: keeping an empty directory is the harmless mistake
    target = str(stand_in)
    return any(
        e.path == target and e.identity == identity and e.owner != me() and _alive(e.owner) for e in ledger.stand_ins
    )


_FOREIGN: tuple[tuple[int, int, int], dict[Path, Identity]] | None = None  # (the file's stat key, its answer)


def foreign() -> dict[Path, Identity]:
    """Stand-ins other processes recorded (alive or not): a sandbox here that mounts on one becomes an owner.
    Asked before every sandboxed command, so the file is parsed again only when it changed (each write
    replaces it: a new inode)."""
    global _FOREIGN
    path = ledger_path()
    try:
        info = os.stat(path)
    except OSError:
        return {}
    key = (info.st_ino, info.st_mtime_ns, info.st_size)
    if _FOREIGN is None or _FOREIGN[0] != key:
        mine = me()
        entries = _read(path).stand_ins
        _FOREIGN = (key, {Path(e.path): e.identity for e in entries if e.owner != mine and e.identity is not None})
    return dict(_FOREIGN[1])


def sweep() -> list[Path]:
    """Remove the leftovers of dead processes (see the module docstring); returns the directories removed."""
    removed: list[Path] = []
    try:
        path = ledger_path()
        if not path.exists():
            return removed
        with _locked(path) as ledger:
            alive = {owner: _alive(owner) for owner in {e.owner for e in ledger.stand_ins}}
            live = [e for e in ledger.stand_ins if alive[e.owner]]
            dead = [e for e in ledger.stand_ins if not alive[e.owner]]
            if not dead:
                return removed
            in_use = {(e.path, e.identity) for e in live}
            for entry in sorted(dead, key=lambda e: len(Path(e.path).parts), reverse=True):
                if entry.identity is None or (entry.path, entry.identity) in in_use:
                    continue
                if _remove_if_ours(Path(entry.path), entry.identity):
                    removed.append(Path(entry.path))
            ledger.stand_ins = live
            _write(path, ledger)
    except OSError as exc:
        log.warning("could not clean up stand-ins a stopped toolgate left (%s)", exc)
    return removed


def _remove_if_ours(path: Path, identity: Identity) -> bool:
    try:
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode) or (info.st_dev, info.st_ino) != identity:
            return False
        path.rmdir()  # fails on a directory someone put something in
    except OSError:
        return False
    return True
