"""How `toolgate run-tools` takes its input apart: lines out of big reads, and a pipe widened to hand them over."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgate.cli import run_tools
from toolgate.cli.run_tools import read_lines, widen_pipe


def reader(data: bytes, cuts: list[int]) -> Callable[[int], bytes]:
    """A `read(n)` that hands `data` over in pieces ending at `cuts` (never more than asked for), then b""."""
    ends = sorted({c for c in cuts if 0 < c < len(data)} | {len(data)})
    pieces: Iterator[int] = iter(ends)
    position = 0

    def read(size: int) -> bytes:
        nonlocal position
        end = next(pieces, position)
        chunk = data[position : min(end, position + size)]
        position += len(chunk)
        return chunk

    return read


@given(st.binary(max_size=300).map(lambda b: b.replace(b"x", b"\n")), st.lists(st.integers(0, 300)))
def test_lines_are_the_input_cut_after_each_newline_however_the_reads_fall(data: bytes, cuts: list[int]) -> None:
    lines = list(read_lines(reader(data, cuts)))
    assert b"".join(lines) == data
    assert all(line.endswith(b"\n") for line in lines[:-1])
    assert all(b"\n" not in line[:-1] for line in lines)
    assert all(lines)  # no empty line is made up at the end of the input or between reads


def test_a_line_spanning_many_reads_comes_out_whole() -> None:
    big = b'{"content": "' + b"a" * (3 << 20) + b'"}\n'
    data = big + b"{}\n" + b"tail"
    lines = list(read_lines(reader(data, list(range(0, len(data), 65536)))))
    assert lines == [big, b"{}\n", b"tail"]


def test_each_read_asks_for_a_megabyte_at_least() -> None:
    """Big reads are the point: the text layer's 8 KiB chunks made a 5 MB line hundreds of reads and decodes."""
    asked: list[int] = []

    def read(size: int) -> bytes:
        asked.append(size)
        return b"line\n" if len(asked) == 1 else b""

    assert list(read_lines(read)) == [b"line\n"]
    assert min(asked) >= 1 << 20


def _pipe_max() -> int:
    return int(Path("/proc/sys/fs/pipe-max-size").read_text())


linux_pipes = pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="pipe sizes are set on Linux only")


@linux_pipes
def test_a_pipe_is_widened_to_a_megabyte() -> None:
    if _pipe_max() < 1 << 20:
        pytest.skip("this system caps pipes below a megabyte")
    read_end, write_end = os.pipe()
    try:
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) < 1 << 20
        widen_pipe(read_end)
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == 1 << 20
        # The writer's end is the same pipe: the client can put a megabyte in before it waits for a read.
        assert os.write(write_end, b"x" * (1 << 20)) == 1 << 20
    finally:
        os.close(read_end)
        os.close(write_end)


@linux_pipes
def test_a_wider_pipe_is_not_narrowed(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    try:
        before = fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ)
        monkeypatch.setattr(run_tools, "_PIPE_BYTES", before // 4)
        widen_pipe(read_end)
        assert fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ) == before
    finally:
        os.close(read_end)
        os.close(write_end)


def test_what_is_not_a_pipe_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(b"{}\n")
    with open(path, "rb") as handle:
        widen_pipe(handle.fileno())  # no error, nothing to widen
        assert handle.read() == b"{}\n"
    widen_pipe(10_000)  # not even open: nothing happens
