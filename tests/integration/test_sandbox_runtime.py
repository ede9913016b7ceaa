"""The session's sandbox object with real bwrap: stand-in mount points and their lifetime, failing closed."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from tests.integration.test_run_tools_cli import TOOLGATE

from toolgate.core.errors import StateError
from toolgate.sandbox import placeholders
from toolgate.sandbox.resident import ResidentProcess, start_background
from toolgate.sandbox.runtime import Launch, Sandbox, SandboxSettings


def gone_soon(*paths: Path) -> None:
    deadline = time.monotonic() + 10
    while any(p.exists() for p in paths) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(p.exists() for p in paths), paths


def on() -> Sandbox:
    return Sandbox(SandboxSettings(enabled="on"), idle_s=1.0)  # an idle sandbox ends soon: its end is seen here


def start_in(launch: Launch, script: str, cwd: Path, env: dict[str, str] | None = None) -> ResidentProcess:
    """Start `script` in the sandbox `launch` holds, its output discarded."""
    assert launch.lease is not None
    with open(os.devnull, "wb") as null:
        argv = [*launch.prefix, "/bin/bash", "-c", script]
        return start_background(launch.lease, argv, cwd, env or dict(os.environ), null.fileno())


def run_in(
    launch: Launch, script: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `script` in the sandbox `launch` holds, as `subprocess.run` with captured text output would."""
    assert launch.lease is not None
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    argv = [*launch.prefix, "/bin/bash", "-c", script]
    try:
        process = start_background(launch.lease, argv, cwd, env or dict(os.environ), out_write, errors=err_write)
    finally:
        os.close(out_write)
        os.close(err_write)
    with open(out_read, encoding="utf-8") as out, open(err_read, encoding="utf-8") as err:
        stdout, stderr = out.read(), err.read()
    return subprocess.CompletedProcess(argv, process.wait(), stdout, stderr)


def test_stand_ins_outlive_a_session_while_another_sandbox_uses_them(workspace: Path, tmp_path: Path) -> None:
    first, second = on(), on()
    first.launch([workspace], tmp_path, [], outside=False)
    assert (workspace / ".vscode").is_dir()
    second.launch([workspace], tmp_path, [], outside=False)
    first.close()
    assert (workspace / ".vscode").is_dir()  # removing it would lift the mount inside `second`'s commands
    second.close()
    assert not (workspace / ".vscode").exists()


def test_stand_ins_stay_while_a_sandboxed_process_runs_and_go_after_it(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    running = sandbox.launch([workspace], tmp_path, [], outside=False)
    process = start_in(running, "exec /bin/sleep 60", workspace)
    try:
        quick = sandbox.launch([workspace], tmp_path, [], outside=False)
        assert run_in(quick, "true", workspace).returncode == 0
        sandbox.finish(quick)
        placeholders.flush()  # what the cleaner does after the idle moment: nothing `running` mounts on goes
        assert (workspace / ".vscode").is_dir() and (workspace / ".envrc").is_dir()
        assert process.poll() is None
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    sandbox.finish(running)
    gone_soon(*workspace.iterdir())  # every stand-in, once nothing mounts on them
    sandbox.close()


def test_a_second_command_cannot_fill_the_stand_ins_the_first_one_made(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    first = sandbox.launch([workspace], tmp_path, [], outside=False)
    second = sandbox.launch([workspace], tmp_path, [], outside=False)
    done = run_in(second, "mkdir .git/objects || mkdir .github/workflows || touch .vscode/x", workspace)
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert not any(any((workspace / name).iterdir()) for name in (".git", ".github", ".vscode"))
    sandbox.finish(second)
    sandbox.finish(first)
    sandbox.close()
    assert sorted(workspace.iterdir()) == []


def test_a_stand_in_someone_filled_from_outside_is_left_alone(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    sandbox.launch([workspace], tmp_path, [], outside=False)
    (workspace / ".vscode" / "settings.json").write_text("{}")  # the editor, outside any sandbox
    sandbox.close()
    assert (workspace / ".vscode" / "settings.json").read_text() == "{}"


def test_a_sandbox_that_cannot_be_set_up_refuses_to_run_rather_than_run_outside(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)  # the file system is the boundary here; root ignores modes
    with pytest.raises(StateError, match="did not run"):
        on().launch([workspace], tmp_path, [], outside=False)


def test_the_prefix_runs_a_command_in_the_sandbox(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    launch = sandbox.launch([workspace], tmp_path, [], outside=False)
    try:
        done = run_in(launch, "touch inside && touch /etc/toolgate-x", workspace)
    finally:
        sandbox.close()
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert (workspace / "inside").exists() and not Path("/etc/toolgate-x").exists()


def test_absent_protected_files_stand_in_only_while_their_commands_run(workspace: Path, tmp_path: Path) -> None:
    sandbox = on()
    first = sandbox.launch([workspace], tmp_path, [], outside=False)
    second = sandbox.launch([workspace], tmp_path, [], outside=False)
    done = run_in(first, "echo 'export X=1' > .envrc", workspace)
    assert "Is a directory" in done.stderr or "Read-only file system" in done.stderr, done.stderr
    assert (workspace / ".envrc").is_dir()  # the empty stand-in, while commands mount on it
    sandbox.finish(first)
    assert (workspace / ".envrc").exists() and (workspace / ".vscode").is_dir()  # `second` still mounts on them
    sandbox.finish(second)
    # Removed by the cleaner, directories' stand-ins like files'; the session still open.
    gone_soon(workspace / ".envrc", workspace / ".mcp.json", workspace / ".vscode", workspace / ".git")
    third = sandbox.launch([workspace], tmp_path, [], outside=False)
    (workspace / ".mcp.json").rmdir()  # the user, outside any sandbox, while a command runs, makes the real one
    (workspace / ".mcp.json").write_text("{}")
    sandbox.close()  # `third` never finished (a background command): the session's end removes the rest
    assert not (workspace / ".envrc").exists() and (workspace / ".mcp.json").read_text() == "{}"
    assert third.lease is not None


def test_the_egress_proxy_starts_with_the_first_networked_command_and_stops_with_the_session(
    workspace: Path, tmp_path: Path
) -> None:
    sandbox = Sandbox(SandboxSettings(enabled="on", network=["Network(domain:pypi.org)"]))
    launch = sandbox.launch([workspace], tmp_path, [], outside=False)
    background = sandbox.launch([workspace], tmp_path, [], outside=False)  # not finished: lives until close
    assert launch.channel is not None and background.channel is not None
    assert launch.channel.socket.is_socket() and launch.env["HTTPS_PROXY"] == "http://127.0.0.1:3128"
    done = run_in(launch, "curl -sS http://evil.test/", workspace, {"PATH": "/usr/bin:/bin", **launch.env})
    note = sandbox.finish(launch)
    assert "Network(domain:evil.test)" in done.stdout
    assert note is not None and "refused 1 connection(s): evil.test:80" in note
    assert not launch.channel.directory.exists() and background.channel.socket.is_socket()
    root = background.channel.directory.parent
    sandbox.close()
    assert not root.exists()
    assert not any(t.name == "toolgate-egress-proxy" for t in threading.enumerate())


def test_outside_and_off_give_no_prefix_and_say_so(workspace: Path, tmp_path: Path) -> None:
    outside = on().launch([workspace], tmp_path, [], outside=True)
    assert outside.prefix == () and outside.note is not None and "outside the sandbox" in outside.note
    off = Sandbox(SandboxSettings(enabled="off"))
    assert off.launch([workspace], tmp_path, [], outside=False).prefix == ()
    assert not off.state().auto_allow
    missing = Sandbox(SandboxSettings(enabled="on"), path_env="/nonexistent")
    state = missing.state()
    assert not state.active and not state.auto_allow and "bwrap was not found" in state.detail


def test_the_sandbox_commands_status_policy_and_run(workspace: Path) -> None:
    def toolgate(*args: str) -> subprocess.CompletedProcess[str]:
        command = [*TOOLGATE, "sandbox", *args[:1], "--workspace", str(workspace), "--sandbox", "on", *args[1:]]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    status = toolgate("status")
    assert status.returncode == 0 and "sandbox: on (bubblewrap" in status.stdout
    policy = toolgate("policy")
    assert policy.returncode == 0
    assert f"writable   {workspace}" in policy.stdout and "network    off" in policy.stdout
    run = toolgate("run", "--", "echo inside > made.txt; touch /etc/toolgate-x; exit 3")
    assert run.returncode == 3 and "Read-only file system" in run.stderr
    assert (workspace / "made.txt").read_text() == "inside\n" and not Path("/etc/toolgate-x").exists()
    assert not (workspace / ".vscode").exists()  # its stand-in is gone with the command
    # Several words are argv, each kept whole: not `sh -c exit 7` (exit status 0) nor `touch a b` (two files).
    assert toolgate("run", "--", "sh", "-c", "exit 7").returncode == 7
    assert toolgate("run", "--", "touch", "a b").returncode == 0 and (workspace / "a b").exists()
    assert not (workspace / "a").exists()
    off = subprocess.run(
        [*TOOLGATE, "sandbox", "policy", "--workspace", str(workspace), "--sandbox", "off"],
        capture_output=True,
        text=True,
    )
    assert off.returncode == 1 and "the sandbox is off" in off.stderr
