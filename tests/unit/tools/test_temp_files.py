"""Temp files a killed writer left beside a target are swept by the next write to it, and nothing else is."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolgate.runtime import Runtime
from toolgate.testing import run1
from toolgate.tools._temp_files import ABANDONED_AFTER_SECONDS, sweep_abandoned, temp_prefix


@pytest.fixture(scope="module")
def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped), so no process runs under it now."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield proc.pid
    proc.kill()
    proc.wait()


def _leftover(directory: Path, name: str, age: float = 2 * ABANDONED_AFTER_SECONDS) -> Path:
    path = directory / name
    path.write_bytes(b"half a write")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


async def test_the_next_write_sweeps_an_abandoned_temp_file(rt: Runtime, workspace: Path, dead_pid: int) -> None:
    target = workspace / "notes.txt"
    leftover = _leftover(workspace, f".notes.txt.{dead_pid}.k2j4_x9a.tg-tmp")
    result = await run1(rt, "Write", file_path=str(target), content="hello\n")
    assert not result.is_error, result.text()
    assert not leftover.exists()
    assert target.read_text() == "hello\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["notes.txt"]


def test_what_is_not_surely_abandoned_is_kept(tmp_path: Path, dead_pid: int, live_pid: int) -> None:
    target = tmp_path / "a.py"
    kept = [
        _leftover(tmp_path, f".a.py.{dead_pid}.fresh123.tg-tmp", age=1),  # just written: its writer may be alive
        _leftover(tmp_path, f".a.py.{live_pid}.alive123.tg-tmp"),  # its writer runs (maybe a slow disk)
        _leftover(tmp_path, f".a.py.{os.getpid()}.mine1234.tg-tmp"),  # this process: a write in flight
        _leftover(tmp_path, f".a.py.2.{dead_pid}.other123.tg-tmp"),  # belongs to the target "a.py.2"
        _leftover(tmp_path, f".a.py.{dead_pid}.tg-tmp"),  # not a name we make
        _leftover(tmp_path, f".a.py.{dead_pid}.x.tg-tmp.bak"),
        _leftover(tmp_path, ".a.py.swp"),
    ]
    folder = tmp_path / f".a.py.{dead_pid}.folder12.tg-tmp"
    folder.mkdir()
    os.utime(folder, (0, 0))
    abandoned = _leftover(tmp_path, f".a.py.{dead_pid}.gone1234.tg-tmp")

    assert sweep_abandoned(target) == [abandoned]
    assert all(path.exists() for path in kept)
    assert folder.is_dir()


def test_the_prefix_names_the_target_and_this_process(tmp_path: Path) -> None:
    assert temp_prefix(tmp_path / "main.rs") == f".main.rs.{os.getpid()}."
    assert len(temp_prefix(tmp_path / ("x" * 255))) < 120  # room for the rest of the name under NAME_MAX


def test_an_unreadable_directory_sweeps_nothing_and_does_not_fail(tmp_path: Path) -> None:
    assert sweep_abandoned(tmp_path / "missing-dir" / "file.txt") == []


async def test_a_sessions_first_read_sweeps_too(rt: Runtime, workspace: Path, dead_pid: int) -> None:
    # A writer was killed; the session after it only reads the file, and still cleans up once.
    target = workspace / "notes.txt"
    target.write_text("kept\n")
    leftover = _leftover(workspace, f".notes.txt.{dead_pid}.k2j4_x9a.tg-tmp")
    result = await run1(rt, "Read", file_path=str(target))
    assert not result.is_error, result.text()
    assert not leftover.exists()
    # Once per session: a leftover that appears later waits for the next write (or the next session).
    later = _leftover(workspace, f".notes.txt.{dead_pid}.later123.tg-tmp")
    await run1(rt, "Read", file_path=str(target))
    assert later.exists()
    assert target.read_text() == "kept\n"
