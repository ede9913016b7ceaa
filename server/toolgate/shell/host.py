"""The session's shell host: a private scratch directory and the background commands.

One per session (a `Dep` whose close stops every background command). A background command writes its
output straight into a file in the session's output store, so nothing has to drain a pipe while nobody is
reading; `BashOutput` reads what is new since the last read. When the session closes, every background
process group is stopped (TERM, then KILL) and waited for; if the interpreter exits without closing the
session, an exit hook still KILLs them; if the process is killed outright, the watchdog stops them.
"""

from __future__ import annotations

import atexit
import codecs
import itertools
import os
import shutil
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from toolgate.core.deps import Dep, Resolver
from toolgate.core.errors import StateError
from toolgate.core.output_store import OUTPUT_STORE, OutputStore
from toolgate.shell.executor import rc_script
from toolgate.shell.groups import BASH, group_alive, stop_group, stop_group_now
from toolgate.shell.watchdog import WATCHDOG

Status = Literal["running", "completed", "failed", "killed"]


class Process(Protocol):
    """What the host needs of a background process (a `subprocess.Popen`, or one in a resident sandbox)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def kill(self) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...


# How a background command is started: argv, cwd, env, and the descriptor its output goes to.
BackgroundSpawn = Callable[[Sequence[str], Path, Mapping[str, str], int], Process]


@dataclass(eq=False)
class BackgroundCommand:
    id: str
    command: str
    cwd: Path
    process: Process
    output_ref: str
    output_path: Path
    started: float  # monotonic
    read_offset: int = 0  # bytes of the output file already returned by BashOutput
    killed: bool = False
    adopted: bool = False  # registered with the output store (done once it has finished)
    finished_at: float | None = None
    notes: Callable[[], str | None] | None = None  # what to add to each read (the sandbox's refusals since)
    _decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
    )

    @property
    def pgid(self) -> int:
        return self.process.pid

    def poll(self) -> Status:
        code = self.process.poll()
        if code is None:
            return "running"
        if self.finished_at is None:
            self.finished_at = time.monotonic()
            if not group_alive(self.pgid):
                WATCHDOG.forget(self.pgid)  # leftovers keep it listed until kill or close stop them
        if self.killed:
            return "killed"
        return "completed" if code == 0 else "failed"

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode

    def read_new(self) -> tuple[str, int]:
        """Output written since the last read (decoded), and its size in bytes."""
        try:
            with open(self.output_path, "rb") as handle:
                handle.seek(self.read_offset)
                data = handle.read()
        except FileNotFoundError:
            return "", 0
        self.read_offset += len(data)
        final = self.process.poll() is not None
        return self._decoder.decode(data, final=final).replace("\x00", "\\x00"), len(data)


class ShellHost:
    def __init__(self, store: OutputStore) -> None:
        self.store = store
        self.directory = Path(tempfile.mkdtemp(prefix="toolgate-shell-"))
        os.chmod(self.directory, 0o700)
        self.rc_file = self.directory / "bash_env.sh"
        self.rc_file.write_text(rc_script(), encoding="utf-8")
        self.tasks: dict[str, BackgroundCommand] = {}
        self._ids = itertools.count(1)
        self._calls = itertools.count(1)
        self._closed = False
        # Kill whatever is left if the interpreter exits without closing the session.
        self._exit_hook = _make_exit_hook(weakref.ref(self))
        atexit.register(self._exit_hook)

    def cwd_file(self) -> Path:
        """A fresh file for one command to report its final directory in (concurrent commands never share)."""
        return self.directory / f"cwd-{next(self._calls)}"

    def start(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        prefix: Sequence[str] = (),
        spawn: BackgroundSpawn | None = None,
    ) -> BackgroundCommand:
        """Start `command` in the background (`prefix`: what runs bash; `spawn`: how, default a child process)."""
        if self._closed:
            raise StateError("The session is closing, so no new background command can start.")
        ref, path = self.store.new_path()
        argv = [*prefix, BASH, "-c", command]
        with open(path, "wb") as output:
            process: Process
            if spawn is not None:
                process = spawn(argv, cwd, env, output.fileno())
            else:
                process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    cwd=cwd,
                    env=dict(env),
                    start_new_session=True,
                )
        WATCHDOG.track(process.pid)
        task = BackgroundCommand(
            id=f"bash_{next(self._ids)}",
            command=command,
            cwd=cwd,
            process=process,
            output_ref=ref,
            output_path=path,
            started=time.monotonic(),
        )
        self.tasks[task.id] = task
        return task

    def get(self, task_id: str) -> BackgroundCommand:
        task = self.tasks.get(task_id.strip())
        if task is None:
            known = ", ".join(self.tasks) or "none"
            raise StateError(
                f"There is no background command {task_id!r} in this session (known: {known}). Use the id that "
                "Bash returned when it started the command."
            )
        return task

    def adopt_output(self, task: BackgroundCommand, source: str) -> None:
        """Register a finished command's output file with the store, so it is retrievable by reference."""
        if not task.adopted and task.poll() != "running" and task.output_path.exists():
            self.store.adopt(task.output_ref, task.output_path, source=source)
            task.adopted = True

    async def kill(self, task: BackgroundCommand) -> bool:
        """Stop the command's whole process group. False if it had already finished."""
        if task.poll() != "running":
            await stop_group(task.pgid, reap=task.process.poll)  # processes it left behind, if any
            WATCHDOG.forget(task.pgid)
            return False
        task.killed = True
        await stop_group(task.pgid, reap=task.process.poll)
        if task.process.poll() is None:  # it left its own group: nothing else can reach it
            task.process.kill()
            task.process.wait()
        WATCHDOG.forget(task.pgid)
        return True

    async def close(self) -> None:
        self._closed = True
        for task in list(self.tasks.values()):
            if task.poll() == "running":
                task.killed = True
            await stop_group(task.pgid, reap=task.process.poll)
            if task.process.poll() is None:
                task.process.kill()
                task.process.wait()
            WATCHDOG.forget(task.pgid)
        self.tasks.clear()
        atexit.unregister(self._exit_hook)
        shutil.rmtree(self.directory, ignore_errors=True)


def _make_exit_hook(host_ref: weakref.ReferenceType[ShellHost]) -> Callable[[], None]:
    def hook() -> None:
        host = host_ref()
        if host is None:
            return
        for task in host.tasks.values():
            stop_group_now(task.pgid)

    return hook


def _create(resolver: Resolver) -> ShellHost:
    return ShellHost(resolver.get(OUTPUT_STORE))


async def _close(host: ShellHost) -> None:
    await host.close()


SHELL_HOST: Dep[ShellHost] = Dep("shell_host", _create, close=_close)
