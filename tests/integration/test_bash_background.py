"""Background commands: start, read new output, filter, stop; nothing outlives the session or the process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from toolgate.core.messages import ToolResult
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.shell.groups import process_alive
from toolgate.testing import run1


def text(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def start(rt: Runtime, command: str) -> str:
    result = await run1(rt, "Bash", command=command, run_in_background=True)
    assert not result.is_error, text(result)
    assert text(result).startswith("Started in the background as bash_")
    return text(result).split(" as ", 1)[1].split(".", 1)[0]


async def read_until(rt: Runtime, task_id: str, done: str, seconds: float = 10.0, **extra: object) -> list[str]:
    """BashOutput results until one contains `done` (a condition, with a deadline)."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while True:
        result = await run1(rt, "BashOutput", id=task_id, **extra)
        assert not result.is_error, text(result)
        seen.append(text(result))
        if done in seen[-1]:
            return seen
        assert time.monotonic() < deadline, seen
        await anyio.sleep(0.05)


def _contents(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def wait_for_file(path: Path, seconds: float = 10.0) -> str:
    deadline = time.monotonic() + seconds
    while not _contents(path):
        assert time.monotonic() < deadline, f"{path} was never written"
        await anyio.sleep(0.02)
    return _contents(path)


async def gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


async def test_lifecycle_new_output_each_read_then_status_and_exit_code(rt: Runtime, workspace: Path) -> None:
    gate = workspace / "gate"
    task_id = await start(rt, f"echo first; while [ ! -e {gate} ]; do sleep 0.02; done; echo second; exit 4")
    reads = await read_until(rt, task_id, "first")
    assert "running" in reads[-1].splitlines()[0]
    gate.touch()
    reads = await read_until(rt, task_id, "failed with exit code 4")
    everything = "\n".join(reads)
    assert "second" in everything
    assert "first" not in everything  # already returned by the earlier read
    ref = reads[-1].rsplit("stored as ", 1)[1].rstrip(".)")
    assert rt.session.deps.get(OUTPUT_STORE).read_text(ref) == "first\nsecond\n"
    again = await run1(rt, "BashOutput", id=task_id)
    assert "No new output since the last read" in text(again)


async def test_filter_returns_only_matching_new_lines(rt: Runtime) -> None:
    task_id = await start(rt, "printf 'apple 1\\nbanana\\napple 2\\n'")
    reads = await read_until(rt, task_id, "completed", filter="^apple")
    # The lines may come over several reads (output can be read before the exit is seen): judge them together.
    everything = "\n".join(reads)
    assert [line for line in everything.splitlines() if line.startswith(("apple", "banana"))] == ["apple 1", "apple 2"]
    shown = sum(int(n) for n in re.findall(r"\((\d+) of \d+ new lines matched", everything))
    new = sum(int(n) for n in re.findall(r"(?:\(\d+|None) of (?:the )?(\d+) new lines matched", everything))
    assert (shown, new) == (2, 3), reads


async def test_long_new_output_is_shortened_and_kept_by_reference(rt: Runtime, workspace: Path) -> None:
    marker, gate = workspace / "printed", workspace / "gate"
    task_id = await start(rt, f"seq 1 100000; echo yes > {marker}; while [ ! -e {gate} ]; do sleep 0.02; done")
    await wait_for_file(marker)
    result = await run1(rt, "BashOutput", id=task_id)
    body = text(result)
    gate.touch()
    assert len(body) < 30_000
    assert body.splitlines()[1:4] == ["1", "2", "3"]
    assert "100000" in body and "omitted" in body
    ref = body.split("stored as ", 1)[1].split(".", 1)[0]
    stored = rt.session.deps.get(OUTPUT_STORE).read_text(ref)
    assert stored.splitlines() == [str(i) for i in range(1, 100001)]


async def test_bad_filter_and_unknown_id_are_explained(rt: Runtime) -> None:
    task_id = await start(rt, "true")
    bad = await run1(rt, "BashOutput", id=task_id, filter="(")
    assert bad.is_error and "not a valid regular expression" in text(bad)
    unknown = await run1(rt, "BashOutput", id="bash_99")
    assert unknown.is_error and "no background command 'bash_99'" in text(unknown)


async def test_kill_shell_stops_the_group_with_its_grandchildren(rt: Runtime, workspace: Path) -> None:
    pid_file = workspace / "gc.pid"
    task_id = await start(rt, f"bash -c 'sleep 300 & echo $! > {pid_file}; wait'")
    grandchild = int(await wait_for_file(pid_file))
    killed = await run1(rt, "KillShell", id=task_id)
    assert not killed.is_error, text(killed)
    assert text(killed).startswith(f"Stopped {task_id}")
    assert await gone(grandchild)
    status = await run1(rt, "BashOutput", id=task_id)
    assert "stopped by KillShell" in text(status)
    again = await run1(rt, "KillShell", id=task_id)
    assert "already finished" in text(again)


async def test_background_commands_start_in_the_session_directory(rt: Runtime, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    await run1(rt, "Bash", command="cd sub")
    task_id = await start(rt, "pwd; cd /")
    reads = await read_until(rt, task_id, "completed")
    assert str(workspace / "sub") in reads[-1]
    assert rt.session.cwd == workspace / "sub"  # a background command never moves the session


async def test_closing_the_session_stops_every_background_process(workspace: Path) -> None:
    pid_file = workspace / "gc.pid"
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
    await run1(runtime, "Bash", command=f"bash -c 'sleep 300 & echo $! > {pid_file}; wait'", run_in_background=True)
    grandchild = int(await wait_for_file(pid_file))
    assert process_alive(grandchild)
    await runtime.aclose()
    assert await gone(grandchild)


@pytest.mark.parametrize(
    ("ending", "background"),
    [("end of input", True), ("SIGTERM", True), ("SIGKILL", True), ("SIGKILL", False)],
)
def test_no_orphan_survives_the_sidecar_process(workspace: Path, ending: str, background: bool) -> None:
    """However the process ends (a SIGKILL runs none of its code: the watchdog acts), its commands end too."""
    pid_file = workspace / "gc.pid"
    call = {
        "type": "tool_use",
        "id": "t1",
        "name": "Bash",
        "input": {"command": f"bash -c 'sleep 300 & echo $! > {pid_file}; wait'", "run_in_background": background},
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolgate",
            "run-tools",
            "--workspace",
            str(workspace),
            "--permission-mode",
            "bypassPermissions",
            "--sandbox",  # the pid it writes is the host's only outside a sandbox (test_sandbox_escapes has that case)
            "off",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    grandchild = 0
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(call) + "\n")
        proc.stdin.flush()
        if background:
            line = proc.stdout.readline()
            assert "Started in the background" in json.loads(line)["content"]
        deadline = time.monotonic() + 10
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        grandchild = int(pid_file.read_text())
        assert process_alive(grandchild)
        if ending.startswith("SIG"):
            proc.send_signal(signal.Signals[ending])
        else:
            proc.stdin.close()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 5
        while process_alive(grandchild):
            assert time.monotonic() < deadline, "the grandchild outlived the sidecar"
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if grandchild and process_alive(grandchild):  # only when the test failed: do not leak it
            os.kill(grandchild, signal.SIGKILL)
