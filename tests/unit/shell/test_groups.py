"""Whether a process group still runs, with real processes: zombies do not count, and /proc is listed only when the
group's leader and the member found last time no longer run."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from toolgate.shell import groups as groups_module
from toolgate.shell.groups import group_alive

ZOMBIE_STATES = ("Z", "X")


def _until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.005)


def _runs(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1].decode() not in ZOMBIE_STATES


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """Shells started in process groups of their own; each group is killed and each shell reaped afterwards."""
    shells: list[subprocess.Popen[str]] = []
    yield shells
    for shell in shells:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait()


def _leftovers(started: list[subprocess.Popen[str]], count: int) -> tuple[int, list[int]]:
    """A shell that puts `count` sleeps in the background and exits: its group, and the sleeps' pids."""
    script = "for _ in $(seq " + str(count) + "); do sleep 300 & echo $!; done; exit"
    shell = subprocess.Popen(["/bin/bash", "-c", script], start_new_session=True, stdout=subprocess.PIPE, text=True)
    started.append(shell)
    assert shell.stdout is not None
    pids = [int(shell.stdout.readline()) for _ in range(count)]
    shell.wait()
    return shell.pid, pids


@pytest.fixture
def proc_listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every directory listed from now on (the real listing still happens)."""
    listed: list[str] = []
    real = os.listdir

    def listing(path: str) -> list[str]:
        listed.append(path)
        return real(path)

    monkeypatch.setattr(groups_module.os, "listdir", listing)
    return listed


def test_a_group_whose_only_member_is_a_zombie_is_not_alive(started: list[subprocess.Popen[str]]) -> None:
    shell = subprocess.Popen(["/bin/true"], start_new_session=True, text=True)
    started.append(shell)
    os.waitid(os.P_PID, shell.pid, os.WEXITED | os.WNOWAIT)  # it ended; not reaped, it stays a zombie in the group

    os.killpg(shell.pid, 0)  # the group still answers the signal
    assert not group_alive(shell.pid)


def test_a_leftover_keeps_the_group_alive_until_it_ends_even_as_a_zombie(
    started: list[subprocess.Popen[str]],
) -> None:
    """The shell exited and was reaped; its background process was reparented (to PID 1, which in a container may
    never reap it, so it can stay in the group as a zombie)."""
    pgid, [leftover] = _leftovers(started, 1)
    assert group_alive(pgid)

    os.kill(leftover, signal.SIGKILL)
    _until(lambda: not _runs(leftover))
    assert not group_alive(pgid)


def test_a_group_whose_leader_runs_is_answered_without_listing_every_process(
    started: list[subprocess.Popen[str]], proc_listings: list[str]
) -> None:
    shell = subprocess.Popen(["/bin/sleep", "300"], start_new_session=True, text=True)
    started.append(shell)

    assert group_alive(shell.pid)
    assert proc_listings == []


def test_a_leftover_found_once_is_looked_at_directly_until_it_ends(
    started: list[subprocess.Popen[str]], proc_listings: list[str]
) -> None:
    pgid, leftovers = _leftovers(started, 2)

    assert group_alive(pgid)
    assert proc_listings == ["/proc"]  # found by looking at every process, once
    for _ in range(20):  # as stopping the group polls it
        assert group_alive(pgid)
    assert proc_listings == ["/proc"]

    # Whichever one was found, the group lives on in the other, and then in neither.
    os.kill(leftovers[0], signal.SIGKILL)
    _until(lambda: not _runs(leftovers[0]))
    assert group_alive(pgid)
    os.kill(leftovers[1], signal.SIGKILL)
    _until(lambda: not _runs(leftovers[1]))
    assert not group_alive(pgid)


def test_a_group_that_is_gone_is_not_alive(proc_listings: list[str]) -> None:
    shell = subprocess.Popen(["/bin/true"], start_new_session=True, text=True)
    shell.wait()

    assert not group_alive(shell.pid)
    assert proc_listings == []
