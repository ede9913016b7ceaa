"""A watchdog that stops our commands' process groups if this process dies without doing it itself.

A graceful end (session close, end of input, SIGTERM, interpreter exit) stops every process group we started.
A SIGKILL (the OOM killer, `kill -9`, a crashed editor host killing its children) runs none of that code, and
the commands would live on: a dev server holding its port, a watcher burning CPU. Linux's PDEATHSIG would only
reach the direct child (the shell), never what the shell started, and it fires when the spawning *thread* ends.

So the first command starts one small bash process in its own session, reading from a pipe we hold open: we
write `+<pgid>` when a group starts and `-<pgid>` when it is gone. However this process ends, the kernel closes
the pipe; the watchdog reads end-of-file and stops every group still listed (TERM, then KILL after a grace
period), then exits. Nothing in it depends on our code still running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import threading

from toolgate.core.child_env import child_environment
from toolgate.shell.groups import BASH

log = logging.getLogger("toolgate.shell")

# Runs in bash with stdin the pipe. The groups live in an associative array; after end-of-file every listed
# group gets TERM (and CONT, so a stopped one can act on it), up to two seconds to finish, then KILL.
_SCRIPT = r"""
declare -A groups
while IFS= read -r line; do
  case $line in
    +[0-9]*) groups[${line:1}]=1 ;;
    -[0-9]*) unset "groups[${line:1}]" ;;
  esac
done
(( ${#groups[@]} )) || exit 0
for g in "${!groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null; kill -CONT -- "-$g" 2>/dev/null; done
for _ in {1..20}; do
  alive=0
  for g in "${!groups[@]}"; do kill -0 -- "-$g" 2>/dev/null && alive=1; done
  (( alive )) || exit 0
  sleep 0.1
done
for g in "${!groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
"""


class GroupWatchdog:
    """Keeps the watchdog process told which of our process groups are running. Safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()

    def track(self, pgid: int) -> None:
        """A group has started: stop it if this process dies before calling `forget`."""
        with self._lock:
            self._groups.add(pgid)
            self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        """The group has ended (or was stopped): the watchdog must never signal that pgid again."""
        with self._lock:
            if pgid in self._groups:
                self._groups.discard(pgid)
                self._send(f"-{pgid}\n")

    @property
    def pid(self) -> int | None:
        """The watchdog process, once one was needed (for tests and diagnostics)."""
        return self._process.pid if self._process is not None else None

    def _send(self, line: str) -> None:
        if self._process is None or self._process.poll() is not None:
            self._restart()  # the new watchdog hears the whole set, this change included
            return
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(line.encode())
            self._process.stdin.flush()
        except OSError:  # someone killed the watchdog
            self._restart()

    def _restart(self) -> None:
        if self._process is not None:
            log.warning("the process-group watchdog ended unexpectedly; starting a new one")
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self._process.wait(timeout=1)  # reap it
        self._process = None
        try:
            process = subprocess.Popen(
                [BASH, "-c", _SCRIPT],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # signals to our group (Ctrl-C, killpg) must not end it with us
                env=child_environment(),  # it needs no secrets, and /proc/<pid>/environ would show them
            )
        except OSError as exc:
            log.error("could not start the process-group watchdog (%s); a killed sidecar may leave commands", exc)
            return
        assert process.stdin is not None
        try:
            process.stdin.write("".join(f"+{pgid}\n" for pgid in sorted(self._groups)).encode())
            process.stdin.flush()
        except OSError:
            return
        self._process = process

    def _after_fork_in_child(self) -> None:
        """A forked child (without exec) must not hold the pipe: the watchdog would never see our end."""
        process, self._process = self._process, None
        self._lock = threading.Lock()
        self._groups = set()
        if process is not None and process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()


# One per process: the pipe's end-of-file is what signals that this process is gone.
WATCHDOG = GroupWatchdog()
os.register_at_fork(after_in_child=WATCHDOG._after_fork_in_child)
