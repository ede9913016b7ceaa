"""Process groups, the unit of cleanup for everything a command starts: is one alive, and stopping one.

Every command runs in its own group (its own session). Stopping sends TERM to the whole group, then KILL to
what is left after a grace period; only a process that left the group on purpose (setsid) can escape.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable

import anyio

BASH = "/bin/bash"
KILL_GRACE_S = 2.0  # between TERM and KILL
POLL_S = 0.02


# Per group, a member last found alive (not its leader): the next question looks there first. A group that outlives
# its leader (background processes the shell left) is polled while it is stopped or settles; without this, each poll
# would read every process's stat again.
_member_seen: dict[int, int] = {}


def _state_and_group(pid: int) -> tuple[bytes, int] | None:
    """`pid`'s state letter and process group, from /proc (None: no such process, or no /proc to ask)."""
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        stat = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    fields = stat[stat.rfind(b")") + 2 :].split()  # the name before ")" may hold spaces and parentheses
    if len(fields) < 3:
        return None
    return fields[0][:1], int(fields[2])


def _live_member(pid: int, pgid: int) -> bool:
    known = _state_and_group(pid)
    return known is not None and known[1] == pgid and known[0] not in (b"Z", b"X")


def _find_live_member(pgid: int) -> int | None:
    """Linux: a member of the group that is not a zombie, looked for among all processes. Raises OSError when
    /proc cannot be listed. Processes started after the leader (higher pids, unless the numbers wrapped) are
    looked at first: the group's other members are among them."""
    pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    for pid in (*(pid for pid in pids if pid > pgid), *(pid for pid in pids if pid < pgid)):
        if _live_member(pid, pgid):
            return pid
    return None


def group_alive(pgid: int) -> bool:
    """Whether the process group still has a member that runs.

    The signal 0 answers whether the group exists; a group whose members are all zombies exists too. A killed
    orphan is reparented to PID 1, and in containers PID 1 often never reaps it, so a zombie can stay in the group
    forever; it runs nothing and holds nothing, so it does not count. On Linux a group that answers is therefore
    looked into: its leader first, then the member found last time, and only then every process.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        _member_seen.pop(pgid, None)
        return False
    except PermissionError:
        return True  # alive, and not ours to look into
    if not sys.platform.startswith("linux"):
        return True
    seen = _member_seen.get(pgid)
    if _live_member(pgid, pgid) or (seen is not None and _live_member(seen, pgid)):
        return True
    try:
        member = _find_live_member(pgid)
    except OSError:
        return True  # no /proc: a group that answers may hold more than zombies
    if member is None:
        _member_seen.pop(pgid, None)
        return False
    _member_seen[pgid] = member
    return True


def process_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    known = _state_and_group(pid)
    return known is None or known[0] not in (b"Z", b"X")


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def stop_group(pgid: int, grace: float = KILL_GRACE_S, reap: Callable[[], object] | None = None) -> bool:
    """TERM the whole group, then KILL what is left after `grace` seconds. True if anything was running.

    `reap` collects our own child's exit status while we wait (a child that is not reaped stays a zombie in
    the group, and where there is no /proc to tell zombies apart, the group would look alive).
    """
    if not group_alive(pgid):
        return False
    _signal_group(pgid, signal.SIGTERM)
    _signal_group(pgid, signal.SIGCONT)  # a stopped process cannot act on TERM
    for sig in (signal.SIGKILL, None):
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            await anyio.sleep(POLL_S)
            if reap is not None:
                reap()
            if not group_alive(pgid):
                return True
        if sig is not None:
            _signal_group(pgid, sig)
    return True


def stop_group_now(pgid: int) -> None:
    """KILL the group without waiting (for interpreter exit, when there is no event loop to wait in)."""
    _signal_group(pgid, signal.SIGKILL)
