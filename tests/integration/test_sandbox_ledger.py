"""Crash hygiene of the sandbox's stand-ins, with real bwrap and real toolgate processes: a killed one's
leftovers are removed by the next sandbox start, a live one's are kept, one the user filled is kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.test_run_tools_cli import TOOLGATE

from toolgate.sandbox import ledger


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(root))
    return root / "toolgate" / "sandbox" / "stand-ins.json"


def sandbox_run(workspace: Path, command: str) -> list[str]:
    return [*TOOLGATE, "sandbox", "run", "--workspace", str(workspace), "--sandbox", "on", "--", command]


def entries_of(record: Path, pid: int) -> list[dict[str, object]]:
    if not record.exists():
        return []
    return [e for e in json.loads(record.read_text())["stand_ins"] if e["pid"] == pid]


@pytest.fixture
def sleeper() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Sandboxed `sleep`s in toolgate processes of their own group; every group is killed at the end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def start_sleeping(workspace: Path, record: Path, started: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(sandbox_run(workspace, "sleep 60"), start_new_session=True)
    started.append(process)
    deadline = time.monotonic() + 30
    while not (entries_of(record, process.pid) and all(e["inode"] for e in entries_of(record, process.pid))):
        assert process.poll() is None and time.monotonic() < deadline, "the sandboxed command never started"
        time.sleep(0.02)
    return process


def test_a_killed_process_leaves_stand_ins_the_next_start_removes_except_one_the_user_filled(
    workspace: Path, data: Path, sleeper: list[subprocess.Popen[bytes]]
) -> None:
    killed = start_sleeping(workspace, data, sleeper)
    assert (workspace / ".vscode").is_dir() and (workspace / ".envrc").is_dir()
    os.kill(killed.pid, signal.SIGKILL)  # mid-command: no clean-up runs
    killed.wait()
    os.killpg(killed.pid, signal.SIGKILL)  # what --die-with-parent does to bwrap, without waiting on it
    assert (workspace / ".vscode").is_dir()  # left behind
    (workspace / ".claude" / "settings.json").write_text("{}")  # the user, outside any sandbox

    done = subprocess.run(sandbox_run(workspace, "true"), capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in workspace.iterdir()) == [".claude"]
    assert (workspace / ".claude" / "settings.json").read_text() == "{}"
    assert json.loads(data.read_text())["stand_ins"] == []


def test_a_live_process_keeps_its_stand_ins_even_when_another_one_shares_them(
    workspace: Path, data: Path, sleeper: list[subprocess.Popen[bytes]]
) -> None:
    live = start_sleeping(workspace, data, sleeper)
    made = sorted(p.name for p in workspace.iterdir())

    # Another process starts (and sweeps), mounts on the same stand-ins, and ends.
    done = subprocess.run(sandbox_run(workspace, "true"), capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in workspace.iterdir()) == made  # removing one would lift `live`'s mount
    assert live.poll() is None and len(entries_of(data, live.pid)) == len(made)


def test_a_reused_pid_is_not_the_owner(workspace: Path, data: Path) -> None:
    stand_in = workspace / ".vscode"
    stand_in.mkdir()
    info = os.lstat(stand_in)
    pid, started = ledger.me()
    entry = {"path": str(stand_in), "device": info.st_dev, "inode": info.st_ino, "pid": pid, "started": started - 1}
    data.parent.mkdir(parents=True)
    data.write_text(json.dumps({"version": 1, "stand_ins": [entry]}))

    assert ledger.sweep() == [stand_in]
    assert not stand_in.exists()


def test_a_directory_made_again_in_its_place_is_not_removed(workspace: Path, data: Path) -> None:
    stand_in = workspace / ".vscode"
    entry = {"path": str(stand_in), "device": 1, "inode": 1, "pid": 2**22 + 1, "started": 1}  # no such process
    data.parent.mkdir(parents=True)
    data.write_text(json.dumps({"version": 1, "stand_ins": [entry]}))
    stand_in.mkdir()  # the user's own, another inode

    assert ledger.sweep() == []
    assert stand_in.is_dir() and json.loads(data.read_text())["stand_ins"] == []
