"""Big files end to end through `toolgate run-tools` (a real process, JSON Lines over its stdin and stdout): a
Write of 5 MB against decoding the same JSON line and a durable write of its content, and an Edit of one line in
a 5 MB file against a read + replace + durable write of the same file (and against the same with the atomic write's
temp file, rename and directory fsync), in turns, in the same run.

What the tool path adds beyond its baseline is the pipe (the line into run-tools' stdin, its result line back),
the permission check, the staleness check, the record of the write (readFileState keeps the text written, so each
line is parsed while the last one's text is still held, into memory the baseline would have reused), the line
count its result reports and the result line; every pass over the 5 MB beyond the one decode and the one write
shows here. No checkpoints: a run without --session-id or --data-dir keeps none.

The Write's goal figure is against a baseline as durable as the tool: the same temp file beside the target,
fsync, rename over it and directory fsync (`_atomic_durable_write`), which a crash leaves old or new. Writing
the file in place with one fsync (`_durable_write`, what this figure was first measured against) is cheaper in
metadata but pays the freeing of the old blocks in its truncation; it is kept as a second figure. The tool
frees the replaced file's blocks on a thread of its own after it answers (`core.atomic_file`), which the
baselines do not: that is the tool's own gain, not a gap in the baselines.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from bench.bench_files import _make_text
from bench.report import Figure, Report, median_us

# Enough turns that the median holds still on a machine others share (a 5 MB write's fsyncs vary a lot).
REPEAT = 30


class RunTools:
    """One `toolgate run-tools` process: a line in, its result lines out."""

    def __init__(self, workspace: Path, data: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "toolgate", "run-tools", "--permission-mode", "acceptEdits", "--sandbox", "off"],
            cwd=workspace,
            env={**os.environ, "XDG_DATA_HOME": str(data)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout

    def call(self, line: bytes) -> dict[str, object]:
        self.stdin.write(line)
        self.stdin.flush()
        result = json.loads(self.stdout.readline())
        assert isinstance(result, dict) and not result.get("is_error"), str(result)[:500]
        return result

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(timeout=60)


def _durable_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _atomic_durable_write(path: Path, data: bytes) -> None:
    """What any atomic, durable replacement costs at least: a temp file beside it, fsynced, renamed over it, and
    the directory fsynced so the rename survives a power loss (the second fsync `_durable_write` does not pay)."""
    temp = path.with_name(f".{path.name}.tmp")
    _durable_write(temp, data)
    os.replace(temp, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


_ids = itertools.count(1)


def _line(name: str, **tool_input: object) -> bytes:
    use = {"type": "tool_use", "id": f"r{next(_ids)}", "name": name, "input": tool_input}
    return json.dumps(use, ensure_ascii=False).encode("utf-8") + b"\n"


def _interleaved(*fns: Callable[[], object]) -> list[list[float]]:
    for fn in fns:
        fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(REPEAT):
        for fn, bucket in zip(fns, samples, strict=True):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return samples


def run(report: Report, workdir: Path) -> None:
    workspace = workdir / "ws"
    workspace.mkdir()
    tools = RunTools(workspace, workdir / "data")
    try:
        _bench_write(report, tools, workspace, workdir)
        _bench_edit(report, tools, workspace, workdir)
    finally:
        tools.close()


def _bench_write(report: Report, tools: RunTools, workspace: Path, workdir: Path) -> None:
    target = workspace / "written.py"
    lines = [_line("Write", file_path=str(target), content=_make_text(f"version {n}")) for n in range(2)]
    tools.call(lines[1])  # it exists, and was written by the session: no Read needed before each Write
    turn = {"n": 0}

    def write() -> None:
        turn["n"] += 1
        tools.call(lines[turn["n"] % 2])

    def decoded() -> bytes:
        content = json.loads(lines[turn["n"] % 2])["input"]["content"]
        assert isinstance(content, str)
        return content.encode("utf-8")

    # Files of their own, each replaced as often as the tool's, so that neither baseline frees the other's blocks.
    atomic_target = workdir / "atomic-written.py"
    plain_target = workdir / "plain-written.py"

    def atomic() -> None:
        _atomic_durable_write(atomic_target, decoded())

    def plain() -> None:
        _durable_write(plain_target, decoded())

    tool_samples, atomic_samples, plain_samples = _interleaved(write, atomic, plain)
    report.add(
        Figure(
            "run-tools",
            "Write 5 MB through `run-tools`",
            median_us(tool_samples) / 1000,
            "ms",
            "json.loads of the same line + encode + temp file, write, fsync, rename, directory fsync",
            median_us(atomic_samples) / 1000,
            note=f"median of {REPEAT}; goal ≤ 2x; as durable as the tool (a crash leaves the old file or the new)",
        )
    )
    report.add(
        Figure(
            "run-tools",
            "Write 5 MB through `run-tools`, vs a write in place",
            median_us(tool_samples) / 1000,
            "ms",
            "json.loads of the same line + encode + write + fsync",
            median_us(plain_samples) / 1000,
            note=f"median of {REPEAT}; the baseline a crash may leave truncated",
        )
    )


def _bench_edit(report: Report, tools: RunTools, workspace: Path, workdir: Path) -> None:
    marker = 'label = "first"'
    target = workspace / "edited.py"
    target.write_text(_make_text(marker), encoding="utf-8")
    tools.call(_line("Read", file_path=str(target), offset=1, limit=10))
    flip = {"on": False}

    def swap(state: dict[str, bool]) -> tuple[str, str]:
        # There and back, so every call changes the file (a replacement of a text by itself is no work at all:
        # str.replace then returns the text it was given).
        state["on"] = not state["on"]
        return (marker, 'label = "second"') if state["on"] else ('label = "second"', marker)

    def edit() -> None:
        # The record each write leaves stands for a Read.
        old, new = swap(flip)
        tools.call(_line("Edit", file_path=str(target), old_string=old, new_string=new))

    plain_target = workdir / "plain-edited.py"
    plain_target.write_text(_make_text(marker), encoding="utf-8")
    plain_flip = {"on": False}

    def plain_edit(write: Callable[[Path, bytes], None]) -> None:
        old, new = swap(plain_flip)
        write(plain_target, plain_target.read_bytes().decode("utf-8").replace(old, new, 1).encode("utf-8"))

    def plain() -> None:
        plain_edit(_durable_write)

    def atomic() -> None:
        plain_edit(_atomic_durable_write)

    tool_samples, plain_samples, atomic_samples = _interleaved(edit, plain, atomic)
    report.add(
        Figure(
            "run-tools",
            "Edit 5 MB (one line) through `run-tools`",
            median_us(tool_samples) / 1000,
            "ms",
            "read + replace + write + fsync of the same file",
            median_us(plain_samples) / 1000,
            note=f"median of {REPEAT}; goal ≤ 1.5x",
        )
    )
    # The same calls against a baseline that keeps the tool's guarantee: what the path around the write adds.
    report.add(
        Figure(
            "run-tools",
            "Edit 5 MB (one line) through `run-tools`, vs an atomic write",
            median_us(tool_samples) / 1000,
            "ms",
            "read + replace + temp file, fsync, rename, directory fsync",
            median_us(atomic_samples) / 1000,
            note=f"median of {REPEAT}",
        )
    )
