"""Running one hook command: `/bin/sh -c COMMAND` with the event's JSON on stdin, in a process group of its own.

Where it starts is the session's business (`core.containment.HookPlace`: the sandbox when it is on). Its stdin is a
pipe holding the payload (never the person's terminal); stdout and stderr are pipes read concurrently and capped at
`MAX_OUTPUT_BYTES` each (what is cut is announced); a timeout kills the whole group and says so, as does a
cancellation. The shell's watchdog stops the group should this process be killed outright while it runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread

from toolgate.core.containment import HookPlace, StartedProcess
from toolgate.permissions.hooks.config import ConfiguredHook
from toolgate.permissions.settings import DEFAULT_HOOK_TIMEOUT
from toolgate.shell.pipes import PipeReader
from toolgate.shell.watchdog import WATCHDOG

MAX_OUTPUT_BYTES = 1024 * 1024
SHELL = "/bin/sh"


@dataclass(frozen=True, slots=True)
class HookRun:
    hook: ConfiguredHook
    exit_code: int | None  # None: it did not finish (timeout) or could not start
    stdout: bytes = b""
    stderr: bytes = b""
    failure: str | None = None
    cut: tuple[str, ...] = ()  # the streams that went over the cap ("stdout", "stderr")


class _Capped:
    def __init__(self) -> None:
        self.data = bytearray()
        self.over = False

    async def drain(self, reader: PipeReader) -> None:
        """Read to the end (a hook blocked on a full pipe would never finish), keeping the first bytes only."""
        async for chunk in reader:
            room = MAX_OUTPUT_BYTES - len(self.data)
            if len(chunk) > room:
                self.over = True
            self.data.extend(chunk[: max(room, 0)])


class _Feed:
    """The write end of the hook's stdin: the payload, then end of file."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd
        os.set_blocking(fd, False)

    async def send(self, payload: bytes) -> None:
        view = memoryview(payload)
        try:
            while view and self.fd is not None:
                try:
                    written = os.write(self.fd, view)
                except BlockingIOError:
                    await anyio.wait_writable(self.fd)
                    continue
                except OSError:
                    return  # the hook did not read (all of) its input; that is its business
                view = view[written:]
        finally:
            self.close()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _kill_group(process: StartedProcess) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _wait(process: StartedProcess) -> int:
    # Its output ended, so it has usually exited already: a thread is needed only when it has not.
    code = process.poll()
    if code is not None:
        return code
    return await anyio.to_thread.run_sync(process.wait, abandon_on_cancel=True)


async def run_hook(
    hook: ConfiguredHook, payload: bytes, cwd: Path, env: Mapping[str, str], place: HookPlace
) -> HookRun:
    timeout = hook.command.timeout or DEFAULT_HOOK_TIMEOUT
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        process = place.start([SHELL, "-c", hook.command.command], cwd, env, stdin_r, out_w, err_w)
    except Exception as exc:  # OSError, or the sandbox could not start it (StateError): it does not run at all
        for fd in (stdin_w, out_r, err_r):
            os.close(fd)
        return HookRun(hook, None, failure=f"could not be started ({exc})")
    finally:
        for fd in (stdin_r, out_w, err_w):  # the hook holds its own copies now
            os.close(fd)
    WATCHDOG.track(process.pid)
    feed, out_reader, err_reader = _Feed(stdin_w), PipeReader(out_r), PipeReader(err_r)
    out, err = _Capped(), _Capped()
    finished = False
    try:
        with anyio.move_on_after(timeout) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(feed.send, payload)
                group.start_soon(out.drain, out_reader)
                group.start_soon(err.drain, err_reader)
            exit_code = await _wait(process)
        cut = tuple(name for name, capped in (("stdout", out), ("stderr", err)) if capped.over)
        if scope.cancelled_caught:
            failure = f"did not finish within {timeout:g} s and was stopped, with everything it started"
            return HookRun(hook, None, bytes(out.data), bytes(err.data), failure, cut)
        finished = True
        return HookRun(hook, exit_code, bytes(out.data), bytes(err.data), cut=cut)
    finally:
        for end in (feed, out_reader, err_reader):
            end.close()
        if not finished:
            _kill_group(process)  # a timeout (or cancellation) stops everything the hook started
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(subprocess.TimeoutExpired):
                await _wait(process)
        # Watched only while it runs: what a finished hook deliberately left running is the hook's business.
        WATCHDOG.forget(process.pid)
