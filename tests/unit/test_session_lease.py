"""A session's lease (toolgate.session_lease): one process at a time, let go when that process ends, counted
within a process. The other process is a real one, so the kernel's flock semantics are what is tested."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolgate.session_lease import SessionInUse, hold_session

HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from toolgate.session_lease import hold_session
    lease = hold_session(Path(sys.argv[1]), "toolgate chat", doing="resumed")
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin (or kills us)
    lease.release()
    print("released", flush=True)
    """
)


class Holder:
    """Another process holding the lease of `directory` until `release` or `kill`."""

    def __init__(self, directory: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(directory)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "held\n"

    def release(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        assert self.process.stdout.readline() == "released\n"
        self.process.wait(timeout=30)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    started: list[Holder] = []
    yield started
    for holder in started:
        if holder.process.poll() is None:
            holder.kill()


def test_another_process_is_refused_by_name_until_the_holder_lets_go(tmp_path: Path, holders: list[Holder]) -> None:
    session = tmp_path / "sessions" / "abc123"
    session.mkdir(parents=True)
    holder = Holder(session)
    holders.append(holder)
    with pytest.raises(SessionInUse) as refused:
        hold_session(session, "toolgate rewind", doing="rewound")
    words = str(refused.value)
    assert "Session abc123 is open in another toolgate process" in words
    assert f"toolgate chat, pid {holder.process.pid}" in words and "cannot be rewound now" in words
    assert "then try again" in words
    holder.release()
    with hold_session(session, "toolgate rewind", doing="rewound"):
        pass


def test_a_killed_holder_leaves_no_lease_behind(tmp_path: Path, holders: list[Holder]) -> None:
    holder = Holder(tmp_path)
    holders.append(holder)
    with pytest.raises(SessionInUse):
        hold_session(tmp_path, "toolgate rewind", doing="rewound")
    holder.kill()  # kill -9: no chance to clean up; the kernel lets go of the lock
    hold_session(tmp_path, "toolgate rewind", doing="rewound").release()


def test_within_a_process_the_lease_is_counted_and_let_go_with_its_last_holder(
    tmp_path: Path, holders: list[Holder]
) -> None:
    first = hold_session(tmp_path, "an editor's sidecar", doing="changed")
    second = hold_session(tmp_path / ".", "an editor's sidecar", doing="changed")  # the same directory
    first.release()
    first.release()  # twice is harmless, and does not let go of the second hold
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run(
            [sys.executable, "-c", HOLDER, str(tmp_path)], input="", text=True, capture_output=True, check=True
        )
    second.release()
    Holder(tmp_path).release()  # now another process gets it


def test_a_missing_session_directory_is_not_created(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        hold_session(tmp_path / "gone", "toolgate rewind", doing="rewound")
    assert not (tmp_path / "gone").exists()
