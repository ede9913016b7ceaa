"""The ripgrep runner: finding the bundled binary, the time limit, the output limit, and cancellation."""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import Runtime, build_runtime
from toolgate.testing import run1
from toolgate.tools._ripgrep import RIPGREP, Ripgrep, find_ripgrep


@pytest.fixture
async def rt(workspace: Path) -> AsyncIterator[Runtime]:
    runtime = build_runtime(workspace, NonInteractiveApprover())
    yield runtime
    await runtime.aclose()


def _fake_rg(tmp_path: Path, body: str, *, block: bool = True) -> tuple[Path, Path]:
    """A stand-in for rg (a real subprocess) that records its pid, runs `body`, then blocks (or exits)."""
    pidfile = tmp_path / "fake-rg.pid"
    script = tmp_path / "fake-rg"
    end = "exec sleep 30" if block else "exit 0"
    script.write_text(f"#!/bin/sh\necho $$ > '{pidfile}'\n{body}\n{end}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, pidfile


async def _wait_for_file(path: Path, deadline: float) -> None:
    """Until the fake rg has written its pid (it is an outside process: there is nothing to await but this)."""
    pidfile = anyio.Path(path)
    for _ in range(int(deadline / 0.01)):
        if await pidfile.exists() and (await pidfile.read_text()).strip():
            return
        await anyio.sleep(0.01)
    raise AssertionError(f"{path} did not appear within {deadline} s")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_wheel_binary_next_to_python_is_found() -> None:
    found = find_ripgrep()
    assert found == Path(sys.executable).parent / "rg"
    assert found.is_file()


def test_path_is_the_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    on_path = bin_dir / "rg"
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "elsewhere" / "python"))
    monkeypatch.setattr("sysconfig.get_path", lambda _name: str(tmp_path / "no-scripts"))
    monkeypatch.setenv("PATH", str(bin_dir))
    assert find_ripgrep() == on_path
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert find_ripgrep() is None


async def test_a_missing_binary_is_a_clear_error(rt: Runtime) -> None:
    rt.session.deps.override(RIPGREP, Ripgrep(None))
    result = await run1(rt, "Grep", pattern="x")
    assert result.is_error
    assert "need ripgrep (rg), and it is not installed" in result.text()
    result = await run1(rt, "Glob", pattern="*")
    assert result.is_error and "ripgrep" in result.text()


async def test_time_limit_returns_what_was_found_marked_partial(rt: Runtime, workspace: Path, tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("x\n")
    script, pidfile = _fake_rg(
        tmp_path, f"printf '%s\\0%s\\0%s' '{workspace}/a.txt' '{workspace}/b.txt' '{workspace}/c.t'"
    )
    rt.session.deps.override(RIPGREP, Ripgrep(script, time_limit=0.5))
    started = time.monotonic()
    result = await run1(rt, "Grep", pattern="x")
    assert time.monotonic() - started < 10
    text = result.text()
    assert not result.is_error
    assert text.startswith("Found at least 2 files, newest first\n")  # what it found before the stop
    assert "a.txt" in text and "b.txt" in text and "c.t" not in text  # the cut-off record is dropped
    assert "Incomplete: the search ran past its 0.5-second time limit" in text
    assert _gone(int(pidfile.read_text()))


async def test_time_limit_with_nothing_found_is_an_error(rt: Runtime, tmp_path: Path) -> None:
    script, pidfile = _fake_rg(tmp_path, "")
    rt.session.deps.override(RIPGREP, Ripgrep(script, time_limit=0.2))
    result = await run1(rt, "Glob", pattern="**/*.py")
    assert result.is_error
    assert "before the search ran past its 0.2-second time limit" in result.text()
    assert _gone(int(pidfile.read_text()))


async def test_output_limit_stops_the_search(rt: Runtime, workspace: Path) -> None:
    for i in range(300):
        (workspace / f"some-rather-long-file-name-{i:04d}.txt").write_text("x")
    rt.session.deps.override(RIPGREP, Ripgrep(find_ripgrep(), max_output_bytes=2000))
    result = await run1(rt, "Glob", pattern="*.txt")
    text = result.text()
    assert not result.is_error
    assert "Incomplete: the search produced more than 2,000 bytes of output" in text
    listed = [line for line in text.splitlines() if line.endswith(".txt")]
    assert 0 < len(listed) < 2000 // 30 + 1


def _flood_after(records: str, workspace: Path) -> str:
    """Shell for a fake rg that prints `records`, then more output than any small cap, one write at a time."""
    flood = f"i=0; while [ $i -lt 5000 ]; do printf '%s\\0' '{workspace}/flood-$i.txt'; i=$((i+1)); done"
    return f"printf '{records}'\n{flood}"


async def test_a_search_stopped_at_its_output_cap_says_its_totals_are_lower_bounds(
    rt: Runtime, workspace: Path, tmp_path: Path
) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text("needle\n")
    (workspace / ".env").write_text("TOKEN=needle\n")
    records = "".join(f"{workspace}/{name}\\0" for name in (".env", "a.txt", "b.txt", "c.txt"))
    script, pidfile = _fake_rg(tmp_path, _flood_after(records, workspace))
    rt.session.deps.override(RIPGREP, Ripgrep(script, max_output_bytes=4000))
    result = await run1(rt, "Grep", pattern="needle", head_limit=2)
    text = result.text()
    assert not result.is_error
    found = int(text.split()[3].replace(",", ""))  # "Found at least N files, newest first"
    assert text.startswith(f"Found at least {found:,} files, newest first\n") and found > 3
    assert f"Showing files 1–2 of at least {found:,} — use offset 2 for more" in text
    assert "Incomplete: the search produced more than 4,000 bytes of output" in text
    # The credential file was among what was read before the stop: still left out, and said so.
    assert ".env" not in text.replace(".env files", "")
    assert "1 matching file is left out because they hold credentials" in text
    assert _gone(int(pidfile.read_text()))


async def test_content_stopped_at_its_output_cap_still_leaves_credential_files_out(
    rt: Runtime, workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".env").write_text("TOKEN=needle\n")
    (workspace / "a.txt").write_text("needle\n")
    records = f"{workspace}/.env\\0001:TOKEN=needle\\n{workspace}/a.txt\\0001:needle\\n"
    script, _ = _fake_rg(tmp_path, _flood_after(records, workspace).replace("\\0' '", "\\0001:x\\n' '"))
    rt.session.deps.override(RIPGREP, Ripgrep(script, max_output_bytes=4000))
    result = await run1(rt, "Grep", pattern="needle", output_mode="content", head_limit=5)
    text = result.text()
    assert text.splitlines()[0] == "a.txt:1:needle"
    assert "TOKEN" not in text and "\n.env" not in text
    assert "Showing lines 1–5 of at least " in text and "Incomplete: the search produced more than" in text
    assert "1 matching file is left out because they hold credentials" in text


async def test_a_flood_on_stderr_does_not_stall_the_search(rt: Runtime, workspace: Path, tmp_path: Path) -> None:
    (workspace / "a.py").write_text("")
    flood = 'i=0; while [ $i -lt 20000 ]; do echo "rg: $i: Permission denied (os error 13)" >&2; i=$((i+1)); done'
    script, _ = _fake_rg(tmp_path, f"{flood}\nprintf '%s\\0' '{workspace}/a.py'", block=False)
    rt.session.deps.override(RIPGREP, Ripgrep(script, time_limit=30))
    result = await run1(rt, "Glob", pattern="*.py")
    text = result.text()
    assert text.startswith("a.py\n\n[Some entries could not be listed: 0: Permission denied (os error 13); 1: ")
    assert text.endswith(" (and more).]")
    assert "Incomplete" not in text


async def test_a_search_does_not_wait_for_threads_other_work_holds(rt: Runtime, workspace: Path) -> None:
    # Its reader and waiter threads depend on each other, so they have tokens of their own: with every token of
    # the shared default limiter taken (by other searches, file reads, ...), a search still finishes.
    (workspace / "a.txt").write_text("needle\n")
    limiter = anyio.to_thread.current_default_thread_limiter()
    holders = [object() for _ in range(int(limiter.total_tokens))]
    for holder in holders:
        await limiter.acquire_on_behalf_of(holder)
    try:
        with anyio.fail_after(15):
            result = await run1(rt, "Grep", pattern="needle", output_mode="count")  # no other thread hand-off
    finally:
        for holder in holders:
            limiter.release_on_behalf_of(holder)
    assert result.text() == "a.txt:1\n1 matching line in 1 file."


async def test_cancel_kills_ripgrep(rt: Runtime, tmp_path: Path) -> None:
    script, pidfile = _fake_rg(tmp_path, "")
    rt.session.deps.override(RIPGREP, Ripgrep(script, time_limit=60))
    cancel = CancelToken()
    results = []

    async def turn() -> None:
        results.extend(
            await rt.orchestrator.run_turn([ToolUse(id="toolu_g", name="Grep", input={"pattern": "x"})], cancel)
        )

    async with anyio.create_task_group() as group:
        group.start_soon(turn)
        await _wait_for_file(pidfile, deadline=10)
        pid = int(pidfile.read_text())
        assert not _gone(pid)
        cancel.cancel()
    [result] = results
    assert result.is_error and 'kind="cancelled"' in result.text()
    assert _gone(pid)


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for d in range(100):
        directory = root / f"d{d:02d}"
        directory.mkdir()
        for f in range(100):
            (directory / f"f{f:03d}.txt").write_text(f"line {d} {f}\n" * 20 + "needle\n")
    return root


async def test_real_ripgrep_on_10k_files(big_tree: Path) -> None:
    runtime = build_runtime(big_tree, NonInteractiveApprover())
    try:
        result = await run1(runtime, "Grep", pattern="needle", output_mode="count", head_limit=3)
        text = result.text()
        assert text.splitlines()[:3] == ["d00/f000.txt:1", "d00/f001.txt:1", "d00/f002.txt:1"]
        assert "10,000 matching lines in 10,000 files." in text
        assert "Showing files 1–3 of 10,000 — use offset 3 for more" in text
        listing = await run1(runtime, "Glob", pattern="**/*.txt")
        assert "Showing the 100 most recently modified of 10,000 matching files." in listing.text()
        assert len([line for line in listing.text().splitlines() if line.endswith(".txt")]) == 100

        # A tiny time limit on the big tree: the run is cut short and says so (partly found, or nothing).
        runtime.session.deps.override(RIPGREP, Ripgrep(find_ripgrep(), time_limit=0.001))
        result = await run1(runtime, "Grep", pattern="needle", output_mode="content")
        assert "0.001-second time limit" in result.text()
        assert result.is_error or "Incomplete:" in result.text()
    finally:
        await runtime.aclose()
