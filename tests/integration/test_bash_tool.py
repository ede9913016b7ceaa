"""The Bash tool with real processes: output, exit codes, working directory, timeouts, interrupts, big output."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from toolgate.core.messages import ToolResult
from toolgate.core.orchestrator import CancelToken
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.core.tool_session import ProgressEvent
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.shell.groups import process_alive
from toolgate.testing import run1, use
from toolgate.tools.bash import BashInput, BashTool


def text(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def bash(rt: Runtime, command: str, **extra: object) -> ToolResult:
    return await run1(rt, "Bash", command=command, **extra)


async def wait_until_gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while process_alive(pid):
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.02)
    return True


def _contents(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def read_pid(path: Path, seconds: float = 5.0) -> int:
    deadline = time.monotonic() + seconds
    while not _contents(path):
        assert time.monotonic() < deadline, f"{path} was never written"
        await anyio.sleep(0.02)
    return int(_contents(path))


# --- output -------------------------------------------------------------------------------------------


async def test_stdout_and_stderr_are_merged_in_write_order(rt: Runtime) -> None:
    result = await bash(rt, "echo one; echo two >&2; echo three; echo four >&2")
    assert not result.is_error
    assert text(result) == "one\ntwo\nthree\nfour"


async def test_environment_disables_editors_and_pagers(rt: Runtime) -> None:
    result = await bash(rt, 'echo "$GIT_EDITOR $PAGER $GIT_PAGER $TOOLGATE"; echo "[${BASH_ENV:-}]"')
    assert text(result) == "true cat cat 1\n[]"


async def test_stdin_is_empty_so_readers_return_at_once(rt: Runtime) -> None:
    result = await bash(rt, 'cat; read -r line; echo "read:[$line]"', timeout=10_000)
    assert not result.is_error, text(result)
    assert text(result) == "read:[]"


async def test_empty_output_is_said_explicitly(rt: Runtime) -> None:
    result = await bash(rt, "true")
    assert text(result) == "(The command succeeded and printed nothing.)"


async def test_leading_blank_lines_and_trailing_space_are_trimmed(rt: Runtime) -> None:
    result = await bash(rt, "printf '\\n\\n  indented\\nlast  \\n\\n'")
    assert text(result) == "  indented\nlast"


async def test_huge_output_shows_head_and_tail_and_stores_the_rest(rt: Runtime) -> None:
    result = await bash(rt, "seq 1 200000")
    body = text(result)
    expected = "".join(f"{i}\n" for i in range(1, 200001))
    assert len(body) < 30_000
    assert body.startswith("1\n2\n3\n")
    assert body.endswith("199999\n200000")
    assert "characters omitted" in body
    ref = body.split("stored as ", 1)[1].split(".", 1)[0]
    assert rt.session.deps.get(OUTPUT_STORE).read_text(ref) == expected


async def test_binary_output_is_escaped_and_announced(rt: Runtime) -> None:
    result = await bash(rt, "printf 'a\\000b\\377\\376'")
    body = text(result)
    assert body.startswith("a\\x00b\\xff\\xfe")
    assert "binary data" in body


async def test_large_binary_output_does_not_break_anything(rt: Runtime) -> None:
    result = await bash(rt, "head -c 300000 /dev/urandom")
    assert not result.is_error
    assert "omitted" in text(result)
    assert "binary data" in text(result)


async def test_output_arrives_as_progress_while_it_runs(workspace: Path) -> None:
    events: list[ProgressEvent] = []
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
    runtime.session.progress.add(events.append)
    try:
        await run1(runtime, "Bash", command="echo first; echo second")
    finally:
        await runtime.aclose()
    assert {e.kind for e in events} == {"output"}
    assert "".join(e.text for e in events) == "first\nsecond\n"


# --- exit status ----------------------------------------------------------------------------------------


async def test_non_zero_exit_is_an_error_that_starts_with_the_code(rt: Runtime) -> None:
    result = await bash(rt, "echo partial; exit 3")
    assert result.is_error
    assert text(result) == "Exit code 3\npartial"


@pytest.mark.parametrize(
    ("command", "meaning"),
    [
        ("grep needle /dev/null", "no lines matched"),
        ("printf 'a\\n' > x; printf 'b\\n' > y; diff x y", "the inputs differ"),
        ("test -f does-not-exist", "the condition is false"),
        ("[ 1 = 2 ]", "the condition is false"),
    ],
)
async def test_exit_one_that_is_an_answer_is_not_an_error(rt: Runtime, command: str, meaning: str) -> None:
    result = await bash(rt, command)
    assert not result.is_error, text(result)
    assert f"Exit code 1: {meaning}" in text(result)


async def test_rg_finding_nothing_is_not_an_error(
    rt: Runtime, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ripgrep wheel puts rg next to this interpreter.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    (workspace / "a.txt").write_text("hay\n")
    result = await bash(rt, "rg needle a.txt")
    assert not result.is_error
    assert "no matches were found" in text(result)


async def test_exit_one_elsewhere_is_an_error(rt: Runtime) -> None:
    result = await bash(rt, "false")
    assert result.is_error
    assert text(result).startswith("Exit code 1")


async def test_grep_failing_for_real_is_an_error(rt: Runtime) -> None:
    result = await bash(rt, "grep x /no/such/file")
    assert result.is_error
    assert text(result).startswith("Exit code 2")


# --- working directory ---------------------------------------------------------------------------------


async def test_directory_persists_between_calls(rt: Runtime, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    first = await bash(rt, "cd sub")
    assert "The working directory is now sub." in text(first)
    assert rt.session.cwd == workspace / "sub"
    assert text(await bash(rt, "pwd")) == str(workspace / "sub")
    assert text(await bash(rt, "cd .. && pwd")).startswith(str(workspace))


async def test_directory_that_disappears_is_reset_to_the_workspace(rt: Runtime, workspace: Path) -> None:
    (workspace / "gone").mkdir()
    await bash(rt, "cd gone")
    (workspace / "gone").rmdir()
    result = await bash(rt, "pwd")
    assert text(result).startswith(str(workspace))
    assert "no longer exists" in text(result)
    assert rt.session.cwd == workspace


async def test_a_missing_workspace_is_explained(tmp_path: Path) -> None:
    workspace = tmp_path / "doomed"
    workspace.mkdir()
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
    try:
        workspace.rmdir()
        result = await run1(runtime, "Bash", command="pwd")
    finally:
        await runtime.aclose()
    assert result.is_error
    assert "no longer exists" in text(result) and 'kind="state"' in text(result)


async def test_leaving_the_working_directories_resets_and_says_so(rt: Runtime, workspace: Path) -> None:
    result = await bash(rt, "cd /")
    assert "outside the working directories" in text(result)
    assert rt.session.cwd == workspace
    assert text(await bash(rt, "pwd")) == str(workspace)


async def test_a_directory_link_swapped_to_point_outside_is_seen_on_the_next_call(
    rt: Runtime, workspace: Path, tmp_path: Path
) -> None:
    # The start directory is resolved on every call: a link that led inside at the last call proves nothing now.
    (workspace / "real").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(workspace / "real", workspace / "link")
    await bash(rt, "cd link")
    assert rt.session.cwd == workspace / "link"
    assert text(await bash(rt, "pwd -P")) == str((workspace / "real").resolve())
    (workspace / "link").unlink()
    os.symlink(outside, workspace / "link")
    result = await bash(rt, "pwd -P")
    assert text(result).startswith(str(workspace.resolve())), "the command must not run outside the workspace"
    assert "is outside the working directories" in text(result)
    assert rt.session.cwd == workspace


async def test_added_working_directories_are_allowed(workspace: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    runtime = build_runtime(
        workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.BYPASS, additional_dirs=[extra])
    )
    try:
        await run1(runtime, "Bash", command=f"cd {extra}")
        assert runtime.session.cwd == extra
    finally:
        await runtime.aclose()


async def test_cd_inside_a_subshell_does_not_move_the_session(rt: Runtime, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    await bash(rt, "(cd sub) && echo $(cd sub; pwd) | cat")
    assert rt.session.cwd == workspace


async def test_a_failing_command_still_reports_where_it_ended(rt: Runtime, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    result = await bash(rt, "cd sub && false")
    assert result.is_error
    assert rt.session.cwd == workspace / "sub"


# --- timeouts, leftovers, interrupts -----------------------------------------------------------------


async def test_timeout_kills_the_whole_group_including_grandchildren(rt: Runtime, workspace: Path) -> None:
    pid_file = workspace / "grandchild.pid"
    command = f"echo before; bash -c 'sleep 300 & echo $! > {pid_file}; wait'"
    result = await bash(rt, command, timeout=1000)
    assert result.is_error
    assert text(result).startswith("Timed out after 1.0 s")
    assert "Output before it was stopped:\nbefore" in text(result)
    assert await wait_until_gone(await read_pid(pid_file))


async def test_a_process_that_ignores_term_is_killed(rt: Runtime, workspace: Path) -> None:
    pid_file = workspace / "stubborn.pid"
    result = await bash(
        rt, f"bash -c 'trap \"\" TERM; echo $$ > {pid_file}; while :; do sleep 0.05; done'", timeout=500
    )
    assert result.is_error
    assert await wait_until_gone(await read_pid(pid_file))


async def test_timeout_above_the_maximum_is_clamped_and_said(rt: Runtime) -> None:
    result = await bash(rt, "echo ok", timeout=900_000)
    assert "ok" in text(result)
    assert "over the 600000 ms maximum" in text(result)


async def test_processes_left_running_by_a_foreground_command_are_stopped(rt: Runtime, workspace: Path) -> None:
    pid_file = workspace / "left.pid"
    result = await bash(rt, f"sleep 300 > /dev/null 2>&1 & echo $! > {pid_file}; echo done")
    assert text(result).startswith("done")
    assert "they were stopped" in text(result)
    assert await wait_until_gone(await read_pid(pid_file))


async def test_cancellation_kills_the_group_and_returns_partial_output(workspace: Path) -> None:
    pid_file = workspace / "cancelled.pid"
    started = anyio.Event()
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
    runtime.session.progress.add(lambda event: started.set() if "started" in event.text else None)
    token = CancelToken()
    command = f"bash -c 'sleep 300 & echo $! > {pid_file}; echo started; wait'"
    try:
        async with anyio.create_task_group() as group:
            results: list[ToolResult] = []

            async def turn() -> None:
                results.extend(await runtime.orchestrator.run_turn([use("Bash", command=command)], token))

            group.start_soon(turn)
            with anyio.fail_after(10):
                await started.wait()
            token.cancel()
    finally:
        await runtime.aclose()
    [result] = results
    assert result.is_error
    assert text(result).startswith("Interrupted after")
    assert "Output before it was stopped:\nstarted" in text(result)
    assert await wait_until_gone(await read_pid(pid_file))


# --- classification in the tool ---------------------------------------------------------------------------


def test_read_only_and_concurrency_come_from_the_classifier() -> None:
    tool = BashTool()
    assert tool.is_read_only(BashInput(command="git log --oneline | head"))
    assert tool.is_concurrency_safe(BashInput(command="ls -la"))
    assert not tool.is_read_only(BashInput(command="git push"))
    assert not tool.is_concurrency_safe(BashInput(command="ls > out"))


async def test_paths_resolve_against_the_session_directory(rt: Runtime, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    await bash(rt, "cd sub")
    tool = BashTool()
    ctx = rt.runner.new_context("t")
    found = tool.paths(BashInput(command="cat a.txt ../b.txt ~/c < /dev/null > out.txt"), ctx)
    home = Path.home()
    assert found == [workspace / "sub" / "a.txt", workspace / "b.txt", home / "c", workspace / "sub" / "out.txt"]


async def test_default_policy_runs_read_only_commands_and_asks_for_the_rest(runtime: Runtime, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    allowed = await run1(runtime, "Bash", command="cat a.txt")
    assert text(allowed) == "hello"
    refused = await run1(runtime, "Bash", command="rm a.txt")
    assert refused.is_error and "permission" in text(refused)
    assert (workspace / "a.txt").exists()
    outside = await run1(runtime, "Bash", command="cat /etc/hostname")
    assert outside.is_error and "outside the working directories" in text(outside)


async def test_empty_command_is_refused_before_running(rt: Runtime) -> None:
    result = await bash(rt, "   ")
    assert result.is_error
    assert "empty" in text(result)


def test_description_mentions_only_tools_that_exist() -> None:
    from toolgate.core.tool import DescribeContext

    tool = BashTool()
    alone = tool.description(DescribeContext(frozenset({"Bash"}), PermissionMode.DEFAULT, Path("/w")))
    assert "BashOutput" not in alone and "Use Read" not in alone
    full = tool.description(
        DescribeContext(frozenset({"Bash", "Read", "BashOutput", "KillShell"}), PermissionMode.DEFAULT, Path("/w"))
    )
    assert "BashOutput" in full and "Use Read" in full
