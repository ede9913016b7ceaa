"""A store's ref changes through one long-lived `git update-ref --stdin`: each checkpoint's (its new ref, the one
retention drops) is one transaction (`start` … `commit`), answered on the same pipe, so a checkpoint pays no
process start-up for its ref.

The process starts on first use, in a process group of its own, and ends when the store closes; it also ends by
itself when its stdin closes, so it outlives nothing that started it. A store dropped without closing hangs up
too: subprocess keeps a running Popen alive after its last reference goes (to reap it later), and with it the
pipe, so without that the process would wait on stdin for as long as the sidecar runs. A transaction git refuses
ends the process (it reports and exits): the refusal is a CheckpointError, and the next transaction starts a new one.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
import weakref

from toolgate.checkpoints.git import ShadowGit
from toolgate.checkpoints.models import CheckpointError

TRANSACTIONS_VERSION = (2, 27)  # `start` and `commit` in update-ref --stdin


class RefUpdates:
    def __init__(self, git: ShadowGit, long_lived: bool) -> None:
        """`long_lived`: the git at hand knows transactions on stdin; without them each change is a process."""
        self.git = git
        self.long_lived = long_lived
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._closed = False

    def apply(self, commands: str) -> None:
        """Make the `update-ref --stdin` commands (create, delete …, each ending in a newline) as one transaction."""
        if not self.long_lived or self._closed:
            self.git.run(["update-ref", "--stdin"], stdin=commands.encode())
            return
        with self._lock:
            process = self._process if self._process is not None else self._start()
            try:
                assert process.stdin is not None
                process.stdin.write(b"start\n" + commands.encode() + b"commit\n")
                process.stdin.flush()
                self._expect(process, b"start: ok\ncommit: ok\n")
            except (OSError, CheckpointError) as exc:
                self._process = None
                raise CheckpointError(f"git update-ref failed: {self._end(process) or exc}") from None

    def _start(self) -> subprocess.Popen[bytes]:
        running = self.git.start(["update-ref", "--stdin"], own_group=True)
        assert running.process.stdin is not None
        weakref.finalize(self, running.process.stdin.close)
        self._process = running.process
        return running.process

    def _expect(self, process: subprocess.Popen[bytes], answer: bytes) -> None:
        """Read `answer` from git within the time cap (anything else, or the end of its output, is a failure)."""
        assert process.stdout is not None
        fd = process.stdout.fileno()
        deadline = time.monotonic() + self.git.timeout
        got = b""
        while len(got) < len(answer):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise CheckpointError(
                    f"git update-ref took longer than {self.git.timeout:g} s (the checkpoint time cap)"
                )
            chunk = os.read(fd, len(answer) - len(got))
            if not chunk or not answer.startswith(got + chunk):
                raise CheckpointError("git update-ref ended the transaction")
            got += chunk

    def _end(self, process: subprocess.Popen[bytes]) -> str:
        """Stop `process` (its whole group) and return the last line it wrote to stderr."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        _out, err = process.communicate()
        lines = err.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else ""

    def close(self) -> None:
        """End the process: its stdin closes, and it exits at once (no transaction is ever left open)."""
        with self._lock:
            self._closed = True
            process, self._process = self._process, None
            if process is None:
                return
            assert process.stdin is not None and process.stdout is not None and process.stderr is not None
            with contextlib.suppress(OSError):
                process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            process.stdout.close()
            process.stderr.close()
