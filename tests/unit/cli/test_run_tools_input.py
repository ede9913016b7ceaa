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


def reader(data: bytes, cuts: list[int]) -> Callable[[memoryview], int]:
    """A `readinto(view)` that hands `data` over in pieces ending at `cuts` (never more than fits), then 0."""
    ends: Iterator[int] = iter(sorted({c for c in cuts if 0 < c < len(data)} | {len(data)}))
    position = 0
    end = 0

    def readinto(view: memoryview) -> int:
        nonlocal position, end
        if position == end:
            end = next(ends, position)
        count = min(end - position, len(view))
        view[:count] = data[position : position + count]
        position += count
        return count

    return readinto


LINES = st.lists(st.text(alphabet=st.sampled_from(["a", "é", "\u2603", "\r", " "]), max_size=40), max_size=8)


@given(LINES, st.booleans(), st.lists(st.integers(0, 400)))
def test_lines_are_the_input_cut_after_each_newline_however_the_reads_fall(
    texts: list[str], last_ends: bool, cuts: list[int]
) -> None:
    sent = [f"{text}\n" for text in texts]
    if sent and not last_ends:
        sent[-1] = sent[-1][:-1] or "x"
    data = "".join(sent).encode()
    assert list(read_lines(reader(data, cuts))) == sent


def test_lines_longer_than_the_buffer_and_many_in_one_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_tools, "_READ_BYTES", 16)
    monkeypatch.setattr(run_tools, "_KEEP_BYTES", 64)
    sent = ["short\n", "a line longer than the buffer, several times over\n", "x\n", "y\n", "b" * 100 + "\n", "z"]
    data = "".join(sent).encode()
    assert list(read_lines(reader(data, list(range(0, len(data), 7))))) == sent
    assert list(read_lines(reader(data, []))) == sent  # all of it in as few reads as the buffer allows


def test_a_buffer_grown_past_what_is_kept_is_let_go_after_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_tools, "_READ_BYTES", 16)
    monkeypatch.setattr(run_tools, "_KEEP_BYTES", 64)
    data = b"b" * 100 + b"\n" + b"short\n"
    feed = reader(data, [101])
    sizes: list[int] = []

    def readinto(view: memoryview) -> int:
        assert isinstance(view.obj, bytearray)
        sizes.append(len(view.obj))
        return feed(view)

    assert list(read_lines(readinto)) == ["b" * 100 + "\n", "short\n"]
    assert max(sizes) > 64 and sizes[-1] == 16


def test_a_line_of_megabytes_comes_out_whole() -> None:
    big = '{"content": "' + "a" * (3 << 20) + '"}\n'
    data = (big + "{}\n" + "tail").encode()
    assert list(read_lines(reader(data, list(range(0, len(data), 65536))))) == [big, "{}\n", "tail"]


def test_bytes_that_are_not_utf_8_become_lone_surrogates() -> None:
    """As Python's stdin decoded them under the C.UTF-8 locale: a stray byte in a path reaches the tool as it was."""
    [line] = read_lines(reader(b'{"file_path": "caf\xe9"}\n', []))
    assert line == '{"file_path": "caf\udce9"}\n'
    assert os.fsencode(line) == b'{"file_path": "caf\xe9"}\n'


def test_one_buffer_serves_every_line() -> None:
    """The memory a big line was read into is read into again: no fresh megabytes (and page faults) per line."""
    buffers: set[int] = set()
    feed = reader(("x" * 1000 + "\n").encode() * 50, list(range(0, 50_050, 1001)))

    def readinto(view: memoryview) -> int:
        buffers.add(id(view.obj))
        return feed(view)

    assert len(list(read_lines(readinto))) == 50
    assert len(buffers) == 1


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
