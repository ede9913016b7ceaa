"""How the in-sandbox runner starts a command (posix_spawn, waited on through its pidfd), with real bwrap: what the
command inherits (signal dispositions, descriptors), what the session learns (its pid and how it ended, even for a
command that ended before the session looked), and what it says when it cannot start one."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from tests.integration.test_sandbox_escapes import _processes_with
from tests.integration.test_sandbox_resident import resident, until
from tests.integration.test_sandbox_runtime import on, run_in, start_in

from toolgate.core.errors import StateError
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sandbox.resident import Resident, open_process
from toolgate.sandbox.settings import SandboxRequest
from toolgate.testing import run1

ENV = {"PATH": "/usr/bin:/bin"}


def sandboxed(workspace: Path) -> Runtime:
    """A runtime whose Bash commands run in the sandbox, and nothing asks."""
    options = RuntimeOptions(mode=PermissionMode.BYPASS, read_settings=False, sandbox=SandboxRequest("on"))
    return build_runtime(workspace, NonInteractiveApprover(), options)


async def running(marker: str, count: int, present: bool = True) -> None:
    """Until `count` processes carry `marker` (present), or none does (not present)."""
    deadline = time.monotonic() + 15
    while (len(_processes_with(marker)) >= count) != present:
        assert time.monotonic() < deadline, f"{count} with {marker} running: {not present}"
        await anyio.sleep(0.02)


def plain(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/bash", "-c", script], cwd=cwd, env=ENV, capture_output=True, text=True, check=False)


def test_a_command_gets_the_signal_dispositions_a_plain_one_has(workspace: Path, tmp_path: Path) -> None:
    """Python (and so the runner) ignores SIGPIPE and SIGXFSZ, and the runner SIGINT; an ignored signal stays
    ignored across an exec, and a command that ignores SIGPIPE complains about every closed pipe."""
    sandbox = on()
    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        ignored = "grep SigIgn /proc/self/status"
        inside = run_in(launch, ignored, workspace, ENV).stdout
        assert inside == plain(ignored, workspace).stdout
        assert int(inside.split()[1], 16) & (1 << (signal.SIGPIPE - 1)) == 0, inside
        piped = run_in(launch, "yes | head -n 1", workspace, ENV)
        assert (piped.returncode, piped.stdout, piped.stderr) == (0, "y\n", ""), piped
    finally:
        sandbox.close()


@pytest.mark.parametrize("sigint", [signal.SIG_DFL, signal.SIG_IGN], ids=["started plainly", "started by nohup &"])
def test_sigint_is_ignored_by_a_command_only_when_it_is_by_a_plain_one(
    workspace: Path, tmp_path: Path, sigint: signal.Handlers
) -> None:
    """A session started with SIGINT ignored (`nohup toolgate ... &`) runs plain commands with it ignored; the
    sandbox's runner handles SIGINT for itself, and must not hand its commands a default one then."""
    previous = signal.signal(signal.SIGINT, sigint)  # what bwrap, and through it the runner, inherits
    sandbox = on()
    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        ignored = "grep SigIgn /proc/self/status"
        inside = int(run_in(launch, ignored, workspace, ENV).stdout.split()[1], 16)
        assert bool(inside & (1 << (signal.SIGINT - 1))) == (sigint is signal.SIG_IGN), hex(inside)
    finally:
        sandbox.close()
        signal.signal(signal.SIGINT, previous)


def test_nothing_the_runner_holds_reaches_a_command(workspace: Path, tmp_path: Path) -> None:
    """Not the control socket, nor another command's report channel, pidfd or output (one runs meanwhile), nor
    this command's own channel: a command sees the descriptors a plain one does."""
    sandbox = on()
    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        other = start_in(launch, "until [ -e stop ]; do sleep 0.05; done", workspace, ENV)
        listing = "ls /proc/self/fd"
        assert run_in(launch, listing, workspace, ENV).stdout == plain(listing, workspace).stdout
        (workspace / "stop").touch()
        assert other.wait(15) == 0
    finally:
        sandbox.close()


def test_a_command_ended_by_a_signal_reports_that_signal(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert run_in(launch, "kill -TERM $$", workspace, ENV).returncode == -signal.SIGTERM
        assert run_in(launch, "exit 7", workspace, ENV).returncode == 7
    finally:
        sandbox.close()


def test_the_pid_arrives_for_a_command_that_ended_before_the_session_looked(workspace: Path, tmp_path: Path) -> None:
    """The runner reaps a command only once the session has its pid: the session needs it (the process group) to
    stop what the command left running, and a reaped process's pidfd no longer tells it."""
    marker = f"toolgate-spawn-{uuid.uuid4().hex[:8]}"
    sandbox = on()
    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert launch.lease is not None
        with open(os.devnull, "wb") as null:
            script = f"(exec -a {marker} sleep 60) & exit 0"
            process = resident(launch).send(
                ["/bin/bash", "-c", script], cwd=workspace, env=ENV, output=null.fileno(), lease=launch.lease
            )
        until(lambda: bool(_processes_with(marker)), "what it left behind runs")
        [left] = _processes_with(marker)
        group = os.getpgid(left)
        until(lambda: _state(group) == "Z", "the command itself ended (and waits to be reaped)")
        process._await_start()  # only now does the session read the report
        assert process.pid == group
        reader = threading.Thread(target=process._watch)
        reader.start()
        assert process.wait(15) == 0
        reader.join()
        assert _state(group) is None  # reaped, once acknowledged
        os.killpg(process.pid, signal.SIGKILL)  # the group is reachable by that pid
        until(lambda: not _processes_with(marker), "what it left behind is stopped with its group")
    finally:
        sandbox.close()


def _state(pid: int) -> str | None:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat_line[stat_line.rfind(")") + 2]


@pytest.mark.parametrize(
    ("argv", "where", "reason"),
    [
        (["/nonexistent/tool"], "ws", "it could not run /nonexistent/tool inside the sandbox: No such file"),
        (["/bin/true"], "elsewhere", "could not enter {cwd} inside the sandbox: No such file"),
    ],
)
def test_a_command_the_runner_cannot_start_is_refused_with_the_reason_and_the_sandbox_goes_on(
    workspace: Path, tmp_path: Path, argv: list[str], where: str, reason: str
) -> None:
    """A program, or a directory, the sandbox does not show (this directory exists outside, but /tmp inside is a
    private one): calling again would fail the same way, so the error says what to do instead."""
    cwd = tmp_path / where
    cwd.mkdir(exist_ok=True)
    sandbox = on()

    async def attempt() -> None:
        assert launch.lease is not None
        await open_process(launch.lease, argv, cwd, ENV)

    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        with pytest.raises(StateError) as refused:
            anyio.run(attempt)
        message = str(refused.value)
        assert reason.format(cwd=cwd) in message and "outside_sandbox: true" in message, message
        assert not resident(launch).retired
        assert run_in(launch, "echo still here", workspace, ENV).stdout == "still here\n"
    finally:
        sandbox.close()


def test_a_background_command_the_runner_cannot_start_is_refused_in_the_bash_calls_terms(
    workspace: Path, tmp_path: Path
) -> None:
    """A background Bash command starts without waiting (start_background); its refusal tells the model the same way
    out as a foreground one's (a hook's says something else: test_hooks_sandbox)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sandbox = on()
    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        with pytest.raises(StateError) as refused:
            start_in(launch, "true", elsewhere, ENV)
        message = str(refused.value)
        assert f"could not enter {elsewhere} inside the sandbox" in message
        assert message.endswith("call it again with outside_sandbox: true and the user will be asked."), message
    finally:
        sandbox.close()


def test_a_python_without_pidfds_fails_closed_with_the_reason(tmp_path: Path) -> None:
    """The runner cannot start and watch commands without os.pidfd_open: the sandbox does not start, and says
    why (the session's launch turns that into "The sandbox could not be set up (...)", and runs nothing)."""
    python = tmp_path / "python3"
    shim = "import os, sys; del os.pidfd_open; exec(sys.argv.pop(1))"
    # Called as `python3 -I -S -c RUNNER FD`: run RUNNER with FD, in a python that lacks os.pidfd_open.
    python.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S -c "{shim}" "$4" "$5"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(OSError, match=r"cannot start commands: its python3 \(.*\) has no os.pidfd_open"):
        Resident((), str(python))


def test_the_runner_reaps_its_commands_even_when_it_inherited_an_ignored_sigchld(workspace: Path) -> None:
    """An ignored SIGCHLD is inherited across an exec (a host may start the session so): the kernel would reap
    each command at its end, before the session had its pid, and its exit code would be lost."""
    script = f"""
import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
from toolgate.sandbox.resident import Resident
resident = Resident((), sys.executable)  # its runner inherits the ignored SIGCHLD (no bwrap needed to show it)
lease = resident.lease()
with open(os.devnull, "wb") as null:
    process = resident.spawn(["/bin/bash", "-c", "exit 3"], cwd={str(workspace)!r}, env={{}}, output=null.fileno(),
                             lease=lease)
print(process.wait(15))
resident.retire()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "3\n"), done


@contextlib.contextmanager
def stopped_by_the_session(marker: str) -> Iterator[None]:
    """Fails the test if processes carrying `marker` still run 20 s on; it then ends them itself, so that a session
    waiting for them (a wrong process group stopped, the right one waited for) returns."""
    overdue = threading.Event()

    def end_them() -> None:
        overdue.set()
        for pid in _processes_with(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    timer = threading.Timer(20, end_them)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
    assert not overdue.is_set(), f"what carries {marker} was not stopped by the session"


async def test_an_interrupted_command_is_stopped_with_its_whole_group(workspace: Path) -> None:
    """Its process group is the one in the session's numbering (the pid came through the pidfd): stopping it
    reaches what the command started too."""
    marker = f"toolgate-spawn-{uuid.uuid4().hex[:8]}"
    runtime = sandboxed(workspace)
    try:
        with stopped_by_the_session(marker):
            async with anyio.create_task_group() as group:
                command = f"(exec -a {marker} sleep 300) & exec -a {marker} sleep 300"
                group.start_soon(lambda: run1(runtime, "Bash", command=command))
                await running(marker, 2)
                group.cancel_scope.cancel()  # what an interrupt does
            await running(marker, 1, present=False)
    finally:
        await runtime.aclose()


async def test_kill_shell_stops_a_sandboxed_background_command_with_its_group(workspace: Path) -> None:
    marker = f"toolgate-spawn-{uuid.uuid4().hex[:8]}"
    runtime = sandboxed(workspace)
    try:
        with stopped_by_the_session(marker):
            command = f"(exec -a {marker} sleep 300) & exec -a {marker} sleep 300"
            started = await run1(runtime, "Bash", command=command, run_in_background=True)
            assert isinstance(started.content, str) and "Started in the background as " in started.content, started
            task_id = started.content.split(" as ", 1)[1].split(".", 1)[0]
            await running(marker, 2)
            killed = await run1(runtime, "KillShell", id=task_id)
            assert not killed.is_error, killed
            await running(marker, 1, present=False)
    finally:
        await runtime.aclose()
