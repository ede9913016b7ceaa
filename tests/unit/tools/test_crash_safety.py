"""A writer killed at random moments leaves the old file or the new one, never a mix or a truncation.

One helper process imports toolgate once, then forks a fresh writer for every trial; the test SIGKILLs that
writer at a random moment and looks at the file. Forking keeps a hundred kills cheap.
"""

from __future__ import annotations

import os
import random
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolgate.tools._write import atomic_write

OLD = b"A" * 2_000_000 + b"\n"
NEW = b"B" * 3_000_000 + b"\n"

FORKER = """
import os, sys
from pathlib import Path
from toolgate.tools._write import atomic_write

target = Path(sys.argv[1])
versions = [b"A" * 2_000_000 + b"\\n", b"B" * 3_000_000 + b"\\n"]
for _ in sys.stdin:
    pid = os.fork()
    if pid == 0:
        n = 1
        while True:
            atomic_write(target, versions[n % 2], os.stat(target), "target")
            if n == 1:
                os.write(1, b"ready\\n")
            n += 1
    os.write(1, f"pid {pid}\\n".encode())
    os.waitpid(pid, 0)
    os.write(1, b"reaped\\n")
"""


class Lines:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.stream = proc.stdout
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stream, selectors.EVENT_READ)

    def next(self, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = self.stream.readline()
                if not line:
                    raise EOFError("the helper process ended")
                return line.decode().strip()
        raise TimeoutError("no answer from the helper process in time")


@pytest.fixture
def forker(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Lines, Path]]:
    target = tmp_path / "data.bin"
    target.write_bytes(OLD)
    proc = subprocess.Popen(
        [sys.executable, "-c", FORKER, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield proc, Lines(proc), target
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def test_killed_writer_never_leaves_a_partial_file(forker: tuple[subprocess.Popen[bytes], Lines, Path]) -> None:
    proc, lines, target = forker
    assert proc.stdin is not None
    rng = random.Random(20261129)
    seen = set()
    longest_pause = 0.03
    trials = 0
    # At least 100 kills, and more until both halves of the write cycle were hit. On a loaded machine one
    # write (with fsync) can outlast the pause, so the pause range grows until kills land in both halves.
    while trials < 100 or seen != {b"A", b"B"}:
        assert trials < 400, f"after {trials} kills the file was only ever seen as {seen}"
        trials += 1
        if trials % 25 == 0 and len(seen) < 2:
            longest_pause *= 2
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        got = {lines.next(), lines.next()}  # "pid N" and "ready", in either order
        [pid_line] = [line for line in got if line.startswith("pid ")]
        assert "ready" in got
        time.sleep(rng.uniform(0, longest_pause))  # the point of the test: a kill at an arbitrary moment
        os.kill(int(pid_line.split()[1]), signal.SIGKILL)
        assert lines.next() == "reaped"
        content = target.read_bytes()
        assert content in (OLD, NEW), f"partial file of {len(content)} bytes"
        seen.add(content[:1])

    # The kills left temp files beside the target; once they are old, the next write sweeps every one.
    leftovers = list(target.parent.glob(".data.bin.*.tg-tmp"))
    for path in leftovers:
        os.utime(path, (0, 0))
    atomic_write(target, OLD, os.stat(target), "target")
    assert target.read_bytes() == OLD
    assert list(target.parent.glob("*.tg-tmp")) == [], f"{len(leftovers)} left over before the write"
