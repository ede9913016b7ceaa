"""One process at a time has a session open: a lease on the session's directory, so that a `toolgate rewind` does not
cut a transcript that a `toolgate chat` or an editor's sidecar is appending to, and two processes never append to
the same transcript at once.

The lease is an exclusive `flock` on `<session dir>/lease`: the kernel lets go of it when its process ends, however
it ends (a crash, kill -9), so a lease can never be left behind. What the file says (which process, what it is)
is only for the words of a refusal; the lock is the truth.

Within one process a session can be opened more than once (the sidecar's handlers, tests): the lease is counted,
and let go with its last holder.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

LEASE_FILE = "lease"


class SessionInUse(RuntimeError):
    """The session is open in another process. The message names it and says what to do."""


@dataclass(slots=True)
class _Held:
    fd: int
    count: int


_HELD: dict[str, _Held] = {}
_GUARD = threading.Lock()


class SessionLease:
    """A held lease; `release` (or leaving the `with` block) lets go of it. Releasing twice is harmless."""

    def __init__(self, key: str) -> None:
        self._key: str | None = key

    def release(self) -> None:
        with _GUARD:
            key, self._key = self._key, None
            held = _HELD.get(key) if key is not None else None
            if key is None or held is None:
                return
            held.count -= 1
            if held.count == 0:
                del _HELD[key]
                os.close(held.fd)  # closing the descriptor lets go of the lock

    def __enter__(self) -> SessionLease:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.release()


def hold_session(session_dir: Path, holder: str, *, doing: str) -> SessionLease:
    """Take the session's lease for this process, or raise SessionInUse. The directory must exist.

    `holder`: what this process is, for another's refusal ("toolgate chat", "the editor's sidecar").
    `doing`: what was about to happen to the session, for this refusal ("rewound", "opened")."""
    key = os.path.realpath(session_dir)
    with _GUARD:
        held = _HELD.get(key)
        if held is not None:
            held.count += 1
            return SessionLease(key)
        fd = os.open(os.path.join(key, LEASE_FILE), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = _describe(fd)
            os.close(fd)
            raise SessionInUse(
                f"Session {os.path.basename(key)} is open in another toolgate process ({other}), so it cannot be "
                f"{doing} now. Finish or close it there (a chat ends with its answer; an editor window lets go of "
                "its sessions when it closes), then try again."
            ) from None
        except BaseException:
            os.close(fd)
            raise
        _record(fd, holder)
        _HELD[key] = _Held(fd, 1)
        return SessionLease(key)


def _record(fd: int, holder: str) -> None:
    """Say who holds the lease, for the words of another process's refusal. Best effort: the lock is the truth."""
    since = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    data = json.dumps({"pid": os.getpid(), "holder": holder, "since": since}).encode()
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def _describe(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or not isinstance(info.get("pid"), int):
        return "which one is not recorded"
    holder = info.get("holder") if isinstance(info.get("holder"), str) else "a toolgate process"
    since = f", since {info['since']}" if isinstance(info.get("since"), str) else ""
    return f"{holder}, pid {info['pid']}{since}"
