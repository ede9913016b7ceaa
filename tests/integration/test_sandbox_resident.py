"""The resident sandbox with real bwrap: commands share one sandbox while its policy holds, and get a new one when
the policy, or a fact of the file system its plan rests on, changes; what a command leaves inside ends with it."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from tests.integration.test_sandbox_escapes import _processes_with
from tests.integration.test_sandbox_runtime import on, run_in

from toolgate.sandbox.resident import Resident, open_process
from toolgate.sandbox.runtime import Launch, Sandbox, SandboxSettings


def resident(launch: Launch) -> Resident:
    assert launch.lease is not None
    return launch.lease.resident


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 15
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def ended(sandbox: Sandbox, one: Resident) -> bool:
    """Gone, and let go of: its hold on the stand-ins too."""
    return one.retired and one._bwrap.poll() is not None and all(e.resident is not one for e in sandbox._residents)


def test_commands_share_one_sandbox_while_the_policy_holds(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    try:
        first = sandbox.launch([workspace], tmp_path, [], outside=False)
        second = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert resident(first) is resident(second)
        # One sandbox: the same namespaces for both commands, and other ones than this process's.
        namespaces = "readlink /proc/self/ns/pid /proc/self/ns/mnt /proc/self/ns/net"
        seen = {run_in(launch, namespaces, workspace).stdout for launch in (first, second)}
        assert len(seen) == 1 and seen != {
            "".join(os.readlink(f"/proc/self/ns/{n}") + "\n" for n in ("pid", "mnt", "net"))
        }
    finally:
        sandbox.close()


def test_another_working_directory_gets_a_new_sandbox_and_the_old_one_ends(workspace: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    sandbox = on()
    try:
        old = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert run_in(old, f"touch {extra}/x", workspace).returncode != 0
        new = sandbox.launch([workspace, extra], tmp_path, [], outside=False)
        assert resident(new) is not resident(old)
        assert run_in(new, f"touch {extra}/x", workspace).returncode == 0 and (extra / "x").exists()
        sandbox.finish(old)
        until(lambda: ended(sandbox, resident(old)), "the replaced sandbox ends once its last command did")
        assert not resident(new).retired
    finally:
        sandbox.close()


def test_changed_settings_and_network_rules_get_a_new_sandbox(workspace: Path, tmp_path: Path) -> None:
    secret = workspace / "secret.txt"
    secret.write_text("hush")
    sandbox = on()
    try:
        plain = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert run_in(plain, "cat secret.txt", workspace).stdout == "hush"
        sandbox.settings = SandboxSettings(enabled="on", hidden=[str(secret)])
        hidden = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert resident(hidden) is not resident(plain)
        assert run_in(hidden, "cat secret.txt", workspace).stdout == ""
        sandbox.settings = SandboxSettings(enabled="on", hidden=[str(secret)], network=["Network(domain:pypi.org)"])
        networked = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert resident(networked) is not resident(hidden) and networked.channel is not None
        env = {"PATH": "/usr/bin:/bin", **networked.env}
        done = run_in(networked, "curl -sS --max-time 10 http://evil.test/", workspace, env)
        assert "Network(domain:evil.test)" in done.stdout, done
    finally:
        sandbox.close()


def test_a_protected_file_made_outside_is_read_only_in_the_next_command(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    try:
        before = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert run_in(before, "true", workspace).returncode == 0
        (workspace / ".gitmodules").write_text("[submodule]\n")  # the user, outside any sandbox
        after = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert resident(after) is not resident(before)
        done = run_in(after, "echo '[x]' >> .gitmodules", workspace)
        assert "Read-only file system" in done.stderr, done
        assert (workspace / ".gitmodules").read_text() == "[submodule]\n"
    finally:
        sandbox.close()


def test_a_stand_in_removed_from_outside_gets_a_new_sandbox(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    try:
        before = sandbox.launch([workspace], tmp_path, [], outside=False)
        (workspace / ".vscode").rmdir()  # lifts the mount inside `before`'s sandbox
        after = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert resident(after) is not resident(before)
        done = run_in(after, "mkdir -p .vscode && echo '{}' > .vscode/tasks.json", workspace)
        assert done.returncode != 0 and not (workspace / ".vscode" / "tasks.json").exists(), done
    finally:
        sandbox.close()


def test_what_a_command_left_in_a_session_of_its_own_ends_with_the_sandbox(workspace: Path, tmp_path: Path) -> None:
    marker = f"toolgate-resident-{os.getpid()}"
    sandbox = on()
    launch = sandbox.launch([workspace], tmp_path, [], outside=False)
    done = run_in(launch, f"setsid bash -c 'exec -a {marker} sleep 300' >/dev/null 2>&1 < /dev/null &", workspace)
    assert done.returncode == 0
    until(lambda: bool(_processes_with(marker)), "the detached process runs")
    sandbox.finish(launch)
    until(lambda: not _processes_with(marker), "it ends with the idle sandbox")
    sandbox.close()


def test_an_idle_sandbox_ends_and_the_next_command_starts_a_new_one(workspace: Path, tmp_path: Path) -> None:
    sandbox: Sandbox = on()
    try:
        first = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert run_in(first, "true", workspace).returncode == 0
        sandbox.finish(first)
        until(lambda: ended(sandbox, resident(first)), "the idle sandbox ends")
        until(lambda: not (workspace / ".vscode").exists(), "its stand-ins go with it")
        second = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert resident(second) is not resident(first)
        assert run_in(second, "touch .vscode/x", workspace).returncode != 0
    finally:
        sandbox.close()


def test_a_sandbox_that_stopped_by_itself_is_replaced_and_cleaned_up(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    try:
        first = sandbox.launch([workspace], tmp_path, [], outside=False)
        os.killpg(resident(first)._bwrap.pid, signal.SIGKILL)  # someone else ended it
        until(lambda: resident(first).retired, "its end is noticed")
        second = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert resident(second) is not resident(first)
        assert run_in(second, "touch .vscode/x", workspace).returncode != 0
        sandbox.finish(first)
        until(
            lambda: ended(sandbox, resident(first)), "the stopped one is ended (and its hold on the stand-ins let go)"
        )
    finally:
        sandbox.close()


def test_nothing_inside_can_read_this_process_environment(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLGATE_TEST_SECRET", "s3cr3t-in-the-sidecar")
    sandbox = on()
    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        env = {"PATH": "/usr/bin:/bin"}  # the command's own (scrubbed) environment
        done = run_in(launch, "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c s3cr3t", workspace, env)
        assert done.stdout.strip() == "0", done
    finally:
        sandbox.close()


async def _run_foreground(launch: Launch, script: str, cwd: Path) -> tuple[int, bytes]:
    assert launch.lease is not None
    process = await open_process(launch.lease, ["/bin/bash", "-c", script], cwd, {"PATH": "/usr/bin:/bin"})
    code = await process.wait()  # while it runs (its output fits in the pipe)
    output = b"".join([chunk async for chunk in process.stdout])
    await process.aclose()
    return code, output


def test_a_foreground_command_is_started_and_waited_for_by_the_event_loop_alone(
    workspace: Path, tmp_path: Path
) -> None:
    """No worker thread on the way (each hop cost about as much as a short command): with every one of anyio's
    worker threads taken, a foreground command still starts, reports its output and its exit status."""
    sandbox = on()

    async def scenario() -> tuple[int, bytes]:
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = 1
        taken, done = anyio.Event(), anyio.Event()

        async def take_the_only_worker() -> None:
            async with limiter:
                taken.set()
                await done.wait()

        async with anyio.create_task_group() as group:
            group.start_soon(take_the_only_worker)
            await taken.wait()
            try:
                with anyio.fail_after(15):
                    return await _run_foreground(launch, "echo inside; exit 3", workspace)
            finally:
                done.set()

    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert anyio.run(scenario) == (3, b"inside\n")
    finally:
        sandbox.close()


def test_a_foreground_command_in_a_sandbox_that_stopped_ends_as_killed(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()

    async def scenario() -> int:
        assert launch.lease is not None
        process = await open_process(launch.lease, ["/bin/sleep", "60"], workspace, {})
        os.killpg(resident(launch)._bwrap.pid, signal.SIGKILL)  # its runner gone: every command inside with it
        with anyio.fail_after(15):
            code = await process.wait()
        await process.aclose()
        return code

    try:
        launch = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert anyio.run(scenario) == -signal.SIGKILL
        assert launch.lease is not None and not launch.lease._held  # let go with the command's end
    finally:
        sandbox.close()
