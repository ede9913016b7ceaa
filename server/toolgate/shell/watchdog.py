"""A watchdog that stops our commands' process groups if this process dies without doing it itself.

A graceful end (session close, end of input, SIGTERM, interpreter exit) stops every process group we started.
A SIGKILL (the OOM killer, `kill -9`, a crashed editor host killing its children) runs none of that code, and
the commands would live on: a dev server holding its port, a watcher burning CPU. Linux's PDEATHSIG would only
reach the direct child (the shell), never what the shell started, and it fires when the spawning *thread* ends.

So the first command starts one small bash process in its own session, holding the read end of a pipe whose
write end only we hold, and a list file that only it and we have open (it removes the file's name at once). We
append `+<pgid>` to the list when a group starts and `-<pgid>` when it is gone: a write to a file wakes nobody
(each line written into the pipe woke the watchdog, which took the CPU for a few hundred µs, twice per command).
Nothing is ever written into the pipe: however this process ends, the kernel closes it, the watchdog reads
end-of-file, replays the list and stops every group still listed (TERM, then KILL after a grace period), then
exits. Nothing in it depends on our code still running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass

from toolgate.core.child_env import child_environment
from toolgate.shell.groups import BASH

log = logging.getLogger("toolgate.shell")

COMPACT_BYTES = 64 * 1024  # past this, a new watchdog takes over with only the groups still running

# Runs in bash with stdin the pipe and $1 the list file, which it opens and unlinks first (nobody else can
# change it, and nothing is left on disk). After end-of-file the list is replayed into an associative array;
# every group left gets TERM (and CONT, so a stopped one can act on it), up to two seconds to finish, then KILL.
_SCRIPT = r"""
exec 3< "$1" || exit 1
rm -rf -- "${1%/*}"
while IFS= read -r _; do :; done
declare -A groups
while IFS= read -r line <&3; do
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


@dataclass
class _Watcher:
    process: subprocess.Popen[bytes]
    list_fd: int  # our append-only descriptor of its list
    written: int  # bytes in the list
    directory: str  # the list's; the watchdog removes it once it has the list open, or we do when it is gone

    def retire(self, running: set[int]) -> None:
        """End this watchdog without it stopping anything: every group it still lists is struck off first."""
        with contextlib.suppress(OSError):
            os.write(self.list_fd, "".join(f"-{pgid}\n" for pgid in sorted(running)).encode())
        self.close()

    def close(self, remove: bool = True) -> None:
        with contextlib.suppress(OSError):
            os.close(self.list_fd)
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        if remove:  # (a watchdog that had not opened its list yet exits without it: it was told to stop nothing)
            shutil.rmtree(self.directory, ignore_errors=True)


class GroupWatchdog:
    """Keeps the watchdog process told which of our process groups are running. Safe to use from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watcher: _Watcher | None = None
        self._retired: list[subprocess.Popen[bytes]] = []  # replaced watchdogs, reaped once they have exited
        self._groups: set[int] = set()

    def track(self, pgid: int) -> None:
        """A group has started: stop it if this process dies before calling `forget`."""
        with self._lock:
            self._groups.add(pgid)
            self._record(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        """The group has ended (or was stopped): the watchdog must never signal that pgid again."""
        with self._lock:
            if pgid in self._groups:
                self._groups.discard(pgid)
                self._record(f"-{pgid}\n")

    @property
    def pid(self) -> int | None:
        """The watchdog process, once one was needed (for tests and diagnostics)."""
        return self._watcher.process.pid if self._watcher is not None else None

    @property
    def _process(self) -> subprocess.Popen[bytes] | None:
        return self._watcher.process if self._watcher is not None else None

    def _record(self, line: str) -> None:
        watcher = self._watcher
        if watcher is None or watcher.process.poll() is not None:
            if watcher is not None:
                log.warning("the process-group watchdog ended unexpectedly; starting a new one")
                watcher.close()
                self._retired.append(watcher.process)
            self._watcher = None
            self._replace()  # the new watchdog's list is the whole set, this change included
            return
        if watcher.written > COMPACT_BYTES:
            self._replace()
            return
        try:
            watcher.written += os.write(watcher.list_fd, line.encode())
        except OSError:
            self._replace()

    def _replace(self) -> None:
        """Start a watchdog listing every running group; only then retire the one it replaces, so no group is
        ever left without one."""
        self._retired = [process for process in self._retired if process.poll() is None]
        old, self._watcher = self._watcher, self._start()
        if old is not None:
            old.retire(self._groups)
            self._retired.append(old.process)

    def _start(self) -> _Watcher | None:
        directory = tempfile.mkdtemp(prefix="toolgate-watchdog-")  # 0700: nobody else can swap the file
        path = os.path.join(directory, "groups")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            shutil.rmtree(directory, ignore_errors=True)
            log.error("could not start the process-group watchdog (%s); a killed sidecar may leave commands", exc)
            return None
        try:
            written = os.write(fd, "".join(f"+{pgid}\n" for pgid in sorted(self._groups)).encode())
            process = subprocess.Popen(
                [BASH, "-c", _SCRIPT, "toolgate-watchdog", path],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # signals to our group (Ctrl-C, killpg) must not end it with us
                env=child_environment(),  # it needs no secrets, and /proc/<pid>/environ would show them
            )
        except OSError as exc:
            os.close(fd)
            shutil.rmtree(directory, ignore_errors=True)
            log.error("could not start the process-group watchdog (%s); a killed sidecar may leave commands", exc)
            return None
        return _Watcher(process, fd, written, directory)

    def _after_fork_in_child(self) -> None:
        """A forked child (without exec) must not hold the pipe: the watchdog would never see our end."""
        watcher, self._watcher = self._watcher, None
        self._lock = threading.Lock()
        self._groups = set()
        self._retired = []
        if watcher is not None:
            watcher.close(remove=False)  # our copies only: the parent's watchdog goes on


# One per process: the pipe's end-of-file is what signals that this process is gone.
WATCHDOG = GroupWatchdog()
os.register_at_fork(after_in_child=WATCHDOG._after_fork_in_child)
