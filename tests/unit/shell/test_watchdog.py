"""The watchdog stops the groups it was told about once our end of its pipe closes, and only those."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from toolgate.shell import watchdog as watchdog_module
from toolgate.shell.groups import group_alive
from toolgate.shell.watchdog import GroupWatchdog


def _wait(condition: object, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def groups() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start process groups (a shell with a grandchild each); whatever a test leaves is killed afterwards."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _start(groups: list[subprocess.Popen[bytes]], trap_term: bool = False) -> int:
    script = "trap '' TERM; sleep 300 & wait" if trap_term else "sleep 300 & wait"
    proc = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    groups.append(proc)
    return proc.pid


def _die(watchdog: GroupWatchdog) -> None:
    """What the kernel does when this process is killed: our end of the pipe closes."""
    process = watchdog._process
    assert process is not None and process.stdin is not None
    process.stdin.close()
    process.wait(timeout=30)


def test_tracked_groups_are_stopped_and_forgotten_ones_are_left(groups: list[subprocess.Popen[bytes]]) -> None:
    watchdog = GroupWatchdog()
    tracked, forgotten = _start(groups), _start(groups)
    watchdog.track(tracked)
    watchdog.track(forgotten)
    watchdog.forget(forgotten)
    for proc in groups:
        proc.poll()
    _die(watchdog)
    assert _wait(lambda: groups[0].poll() is not None and not group_alive(tracked))
    assert group_alive(forgotten)


def test_a_group_that_ignores_term_is_killed(groups: list[subprocess.Popen[bytes]]) -> None:
    watchdog = GroupWatchdog()
    stubborn = _start(groups, trap_term=True)
    watchdog.track(stubborn)
    _die(watchdog)  # the watchdog itself waits out the grace period, then KILLs
    assert _wait(lambda: groups[0].poll() is not None and not group_alive(stubborn))


def test_a_killed_watchdog_is_replaced_and_told_every_group(groups: list[subprocess.Popen[bytes]]) -> None:
    watchdog = GroupWatchdog()
    first = _start(groups)
    watchdog.track(first)
    old_pid = watchdog.pid
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    assert _wait(lambda: watchdog._process is not None and watchdog._process.poll() is not None)
    second = _start(groups)
    watchdog.track(second)
    assert watchdog.pid not in (None, old_pid)
    _die(watchdog)
    assert _wait(lambda: all(p.poll() is not None for p in groups) and not group_alive(first))
    assert not group_alive(second)


def test_nothing_starts_until_a_group_is_tracked() -> None:
    watchdog = GroupWatchdog()
    watchdog.forget(12345)
    assert watchdog.pid is None


def test_a_long_list_is_handed_to_a_new_watchdog_without_dropping_a_group(
    groups: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past COMPACT_BYTES a new watchdog takes over the running groups; the old one ends and stops nothing."""
    monkeypatch.setattr(watchdog_module, "COMPACT_BYTES", 64)
    watchdog = GroupWatchdog()
    running = _start(groups)
    watchdog.track(running)
    old, first = watchdog._process, watchdog._watcher
    assert old is not None and first is not None
    # Once it has its list open (and removed the name). One retired before that exits 1 at once: it was told to
    # stop nothing either way, but this test wants to see it go through its list.
    assert _wait(lambda: not os.path.exists(first.directory))
    for fake in range(900_000, 900_020):  # groups that come and go (no such pgids exist)
        watchdog.track(fake)
        watchdog.forget(fake)
    assert watchdog.pid != old.pid
    assert old.wait(timeout=30) == 0  # struck off first, so it had nothing to stop
    assert group_alive(running)
    _die(watchdog)
    assert _wait(lambda: groups[0].poll() is not None and not group_alive(running))


def test_the_list_is_private_and_leaves_nothing_on_disk(groups: list[subprocess.Popen[bytes]]) -> None:
    watchdog = GroupWatchdog()
    watchdog.track(_start(groups))
    watcher = watchdog._watcher
    assert watcher is not None
    # The watchdog holds the list open and removed its name: nobody else can find or change it.
    assert _wait(lambda: not os.path.exists(watcher.directory))
    _die(watchdog)
