"""Running one command in /bin/bash: its own process group, no stdin, merged output, a timeout that
kills everything it started, and the directory it ended in.

The process group is the unit of cleanup (`groups`). On timeout, cancellation, or when the shell exits but
leaves processes behind, the whole group is stopped; while it runs, the `watchdog` stops it should this process
be killed outright. The final working directory comes from an EXIT trap installed through
BASH_ENV (see `rc_script`), so the user's command runs exactly as written, not wrapped in anything.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import anyio

from toolgate.core.child_env import child_environment
from toolgate.shell.groups import BASH, POLL_S, group_alive, stop_group, stop_group_now
from toolgate.shell.output import OutputCapture
from toolgate.shell.pipes import PipeReader
from toolgate.shell.watchdog import WATCHDOG

EXIT_GRACE_S = 0.25  # how long output may keep flowing after the shell itself exited
READ_SIZE = 65536

# Added to the environment of every command: no editor or pager may wait for a person who is not there.
EXTRA_ENV = {"GIT_EDITOR": "true", "PAGER": "cat", "GIT_PAGER": "cat", "TOOLGATE": "1"}
CWD_FILE_VAR = "TOOLGATE_CWD_FILE"


def rc_script() -> str:
    """Sourced by bash before the command (BASH_ENV): on exit, record the directory if the command moved.

    It unsets BASH_ENV at once so that scripts the command runs do not source it too, and keeps the file
    name in an unexported variable. Nothing is written when the directory did not change (creating a file
    costs more than the rest of a short command). A command that sets its own EXIT trap replaces this one;
    the session then keeps its previous directory.
    """
    return (
        f'__toolgate_cwd_file="${{{CWD_FILE_VAR}:-}}" __toolgate_start="$PWD"\n'
        f"unset BASH_ENV {CWD_FILE_VAR}\n"
        'if [ -n "$__toolgate_cwd_file" ]; then\n'
        '  trap \'[ "$PWD" = "$__toolgate_start" ] || builtin pwd >| "$__toolgate_cwd_file"\' EXIT\n'
        "fi\n"
    )


def command_env(
    pass_through: Iterable[str] = (), base: Mapping[str, str] | None = None, **extra: str
) -> dict[str, str]:
    """The environment of a Bash command: this process's without its secrets (core/child_env.py), except the
    variables the user's settings pass through, plus the variables above."""
    return child_environment(base, pass_through=pass_through, extra={**EXTRA_ENV, **extra})


class Spawned(Protocol):
    """What `run_command` needs of a started process (an anyio process, or one in a resident sandbox)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stdout(self) -> AsyncIterable[bytes] | None: ...

    async def wait(self) -> int: ...

    async def aclose(self) -> None: ...


# How a command is started: argv, cwd and env in; its stdout and stderr merged into `stdout`, stdin empty, a
# session (and process group) of its own.
Spawn = Callable[[Sequence[str], Path, Mapping[str, str]], Awaitable[Spawned]]


async def open_plain(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Spawned:
    """A child of this process, its exit and its output waited on by the event loop itself (`DirectProcess`);
    where there are no pidfds (not Linux, or a kernel before 5.3), an anyio process."""
    if not _HAVE_PIDFD:
        return await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    return _start_direct(argv, cwd, env)


def _start_direct(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> DirectProcess:
    """Start the child (Popen returns once it has exec'd: it does not wait for the command)."""
    read, write = os.pipe()
    try:
        popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=write,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)  # the child has its copies; ours would keep end-of-file from ever coming
    try:
        pidfd = os.pidfd_open(popen.pid)  # our unreaped child: its pid cannot have been reused yet
    except BaseException:
        os.close(read)
        stop_group_now(popen.pid)  # not watched, so not left running
        popen.wait()
        raise
    return DirectProcess(popen, pidfd, PipeReader(read))


def _pidfd_works() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


_HAVE_PIDFD = _pidfd_works()


class DirectProcess:
    """A started command whose exit is seen through its pidfd (readable once it has exited) and whose output
    is read from a non-blocking pipe, both in the event loop.

    Why not anyio's (asyncio's) process: before Python 3.12 asyncio waits for each child in a thread of its own,
    and starting that thread and handing its result back cost about as much as the rest of a short command.
    """

    def __init__(self, popen: subprocess.Popen[bytes], pidfd: int, stdout: PipeReader) -> None:
        self._popen = popen
        self._pidfd: int | None = pidfd
        self.stdout = stdout

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        while (code := self._popen.poll()) is None:
            if self._pidfd is None:  # closed by aclose: nothing to wait on but the process itself
                await anyio.sleep(POLL_S)
            else:
                await anyio.wait_readable(self._pidfd)
        return code

    async def aclose(self) -> None:
        """Close the output and wait for the process (killed first if this is cancelled), like anyio's."""
        self.stdout.close()
        try:
            await self.wait()
        except BaseException:
            with anyio.CancelScope(shield=True):
                self._popen.kill()
                await self.wait()
            raise
        finally:
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None


# --- one foreground command --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShellRun:
    exit_code: int | None  # None: stopped by us (timeout)
    timed_out: bool
    duration_s: float
    final_cwd: Path | None  # where the shell ended, if it moved (None: it did not, or it was killed, or it set
    # its own EXIT trap)
    stopped_leftovers: bool  # it left processes running after it exited, and they were stopped


async def run_command(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    capture: OutputCapture,
    cwd_file: Path,
    on_output: Callable[[str], None] | None = None,
    prefix: Sequence[str] = (),
    spawn: Spawn = open_plain,
) -> ShellRun:
    """Run `command` and wait for it (and its output) to finish, or for the timeout.

    On cancellation the group is stopped (shielded from the cancellation) and the cancellation goes on;
    `capture` holds what was printed until then. `prefix` runs bash (the sandbox's network forwarder);
    `spawn` starts it (in a resident sandbox: its command is a process group of this process's numbering, so
    stopping the group works the same).
    """
    started = time.monotonic()
    _discard(cwd_file)  # a stale file from an earlier run must not be mistaken for this one's answer
    process = await spawn([*prefix, BASH, "-c", command], cwd, {**env, CWD_FILE_VAR: str(cwd_file)})
    pgid = process.pid
    WATCHDOG.track(pgid)
    stopped_leftovers = False
    timed_out = False
    try:
        with anyio.move_on_after(timeout_s) as deadline:
            async with anyio.create_task_group() as group:
                reader_done = anyio.Event()

                async def read() -> None:
                    assert process.stdout is not None
                    try:
                        async for chunk in process.stdout:
                            text = capture.feed(chunk)
                            if text and on_output is not None:
                                on_output(text)
                    except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                        pass
                    finally:
                        reader_done.set()

                async def watch_exit() -> None:
                    nonlocal stopped_leftovers
                    await process.wait()
                    # The shell is gone; processes it put in the background may still hold the output open.
                    if not reader_done.is_set():
                        with anyio.move_on_after(EXIT_GRACE_S):
                            await reader_done.wait()
                    if prefix:  # the forwarder's relay ends with the command, a moment later
                        await _settle(pgid)
                    if not reader_done.is_set() or group_alive(pgid):
                        stopped_leftovers = await stop_group(pgid)

                group.start_soon(read)
                group.start_soon(watch_exit)
        if deadline.cancelled_caught:
            timed_out = True
            with anyio.CancelScope(shield=True):
                await stop_group(pgid)
                await process.wait()
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stop_group(pgid)
            await process.wait()
            capture.finish()
        raise
    finally:
        with anyio.CancelScope(shield=True):
            await process.aclose()
        if not group_alive(pgid):
            WATCHDOG.forget(pgid)  # still listed otherwise: a setsid-free leftover the stop could not end
    capture.finish()
    return ShellRun(
        exit_code=None if timed_out else process.returncode,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
        final_cwd=None if timed_out else _read_cwd(cwd_file),
        stopped_leftovers=stopped_leftovers,
    )


async def _settle(pgid: int) -> None:
    """A helper that ends with the command (the network forwarder's relay) may outlive it by a moment: give
    the group that moment before anything left in it counts as left behind."""
    deadline = time.monotonic() + EXIT_GRACE_S
    pause = 0.0005  # the moment is usually well under a millisecond: a fixed POLL_S would add it to every command
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        await anyio.sleep(pause)
        pause = min(pause * 2, POLL_S)


def _discard(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _read_cwd(cwd_file: Path) -> Path | None:
    try:
        handle = open(cwd_file, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:  # the usual case: it did not move (one failed open, no unlink to fail as well)
        return None
    except OSError:
        cwd_file.unlink(missing_ok=True)
        return None
    try:
        with handle:
            text = handle.read().decode("utf-8", errors="surrogateescape").rstrip("\n")
    except OSError:
        return None
    finally:
        cwd_file.unlink(missing_ok=True)
    return Path(text) if text.startswith("/") else None
