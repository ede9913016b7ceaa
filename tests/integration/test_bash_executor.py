"""executor.run_command with real bash: a command's exit and output are waited on by the event loop itself."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import anyio
import pytest

from toolgate.shell import executor
from toolgate.shell.executor import command_env, open_plain, run_command
from toolgate.shell.output import OutputCapture

pytestmark = pytest.mark.skipif(not executor._HAVE_PIDFD, reason="needs pidfds (Linux 5.3 or later)")


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def test_no_thread_is_started_to_wait_for_a_command(tmp_path: Path) -> None:
    """asyncio's processes each get a thread that waits for them (before Python 3.12); ours do not."""
    before = {thread.ident for thread in threading.enumerate()}
    seen: list[set[int | None]] = []
    started = anyio.Event()

    def on_output(text: str) -> None:
        if "ready" in text and not started.is_set():
            seen.append({thread.ident for thread in threading.enumerate()} - before)
            started.set()

    run = await run_command(
        "echo ready; sleep 0.3; echo done; cd /",
        cwd=tmp_path,
        env=command_env(BASH_ENV=str(_rc(tmp_path))),
        timeout_s=30,
        capture=(capture := OutputCapture()),
        cwd_file=tmp_path / "cwd",
        on_output=on_output,
    )
    assert started.is_set() and seen == [set()]
    assert run.exit_code == 0 and not run.timed_out and run.final_cwd == Path("/")
    assert capture.result().text == "ready\ndone\n"


async def test_exit_status_output_and_descriptors(tmp_path: Path) -> None:
    before = _open_fds()
    for code in (0, 3):
        capture = OutputCapture()
        run = await run_command(
            f"printf 'out '; printf 'err' >&2; exit {code}",
            cwd=tmp_path,
            env=command_env(),
            timeout_s=30,
            capture=capture,
            cwd_file=tmp_path / "cwd",
        )
        assert run.exit_code == code and capture.result().text == "out err"
    assert _open_fds() == before  # the pipe and the pidfd of each command are closed


async def test_a_command_that_cannot_start_fails_and_leaves_no_descriptor(tmp_path: Path) -> None:
    before = _open_fds()
    with pytest.raises(FileNotFoundError):
        await open_plain(["/bin/bash", "-c", "true"], tmp_path / "missing", command_env())
    assert _open_fds() == before


async def test_closing_a_running_command_when_cancelled_kills_it(tmp_path: Path) -> None:
    process = await open_plain(["/bin/bash", "-c", "exec sleep 30"], tmp_path, command_env())
    with anyio.CancelScope() as scope:
        scope.cancel()
        await process.aclose()  # cancelled at once: it must not be left running
    assert process.returncode is not None and process.returncode < 0


def _rc(directory: Path) -> Path:
    path = directory / "rc.sh"
    path.write_text(executor.rc_script(), encoding="utf-8")
    return path
