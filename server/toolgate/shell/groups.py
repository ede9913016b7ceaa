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


def _live_members_proc(pgid: int) -> bool | None:
    """Linux: does the group have a member that is not a zombie? (None: /proc is not available.)

    A killed orphan is reparented to PID 1, and in containers PID 1 often never reaps it, so a zombie can
    stay in the group forever; it runs nothing and holds nothing, so it does not count.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if sys.platform.startswith("linux"):
        live = _live_members_proc(pgid)
        if live is not None:
            return live
    return True


def process_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")
    except OSError:
        return True


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
