"""The record a Write or Edit leaves lets the next one skip reading the file back, only while the file provably is
the one written: every other file state is read from disk, exactly as a first write would read it."""

from __future__ import annotations

import os
from pathlib import Path

from toolgate.runtime import Runtime
from toolgate.testing import run1


def _identity(path: Path) -> tuple[int, ...]:
    st = path.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _rewrite_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.write(data)


async def test_a_write_records_what_the_file_now_is(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    result = await run1(rt, "Write", file_path=str(target), content="one\ntwo\n")
    assert not result.is_error, result.text()
    record = rt.session.file_state.get(target)
    assert record is not None and record.content == "one\ntwo\n"
    assert record.identity == _identity(target) and record.text_format is not None

    edited = await run1(rt, "Edit", file_path=str(target), old_string="two", new_string="2")
    assert not edited.is_error, edited.text()
    assert target.read_bytes() == b"one\n2\n"
    again = rt.session.file_state.get(target)
    assert again is not None and again.identity == _identity(target)


async def test_a_crlf_file_is_read_back_rather_than_remembered(rt: Runtime, workspace: Path) -> None:
    target = workspace / "win.txt"
    target.write_bytes(b"one\r\ntwo\r\n")
    await run1(rt, "Read", file_path=str(target))
    result = await run1(rt, "Write", file_path=str(target), content="one\ntwo\nthree\n")
    assert not result.is_error, result.text()
    record = rt.session.file_state.get(target)
    assert record is not None and record.identity is None
    edited = await run1(rt, "Edit", file_path=str(target), old_string="three", new_string="3")
    assert not edited.is_error, edited.text()
    assert target.read_bytes() == b"one\r\ntwo\r\n3\r\n"


async def test_content_sent_with_carriage_returns_is_read_back_rather_than_remembered(
    rt: Runtime, workspace: Path
) -> None:
    # Whether the content holds a "\r" is looked for once, in the plan; what the write records rests on that look.
    for name, content, lf_form in [("crlf.txt", "a\r\nb\r\n", "a\nb\n"), ("cr.txt", "a\rb\n", "a\rb\n")]:
        target = workspace / name
        result = await run1(rt, "Write", file_path=str(target), content=content)
        assert not result.is_error, result.text()
        assert target.read_bytes() == content.encode()
        record = rt.session.file_state.get(target)
        assert record is not None and record.content == lf_form and record.identity is None
        edited = await run1(rt, "Edit", file_path=str(target), old_string="b", new_string="B")
        assert not edited.is_error, edited.text()
        assert target.read_bytes() == content.replace("b", "B").encode()


async def test_a_change_that_keeps_size_and_timestamp_is_still_seen(rt: Runtime, workspace: Path) -> None:
    # Another program rewrites the file in place with as many bytes and puts the timestamp back (as `cp -p` or
    # rsync would): only the inode's change time tells. The Edit must work on what is on disk, not the record.
    target = workspace / "a.txt"
    await run1(rt, "Write", file_path=str(target), content="mine\n")
    st = target.stat()
    _rewrite_in_place(target, b"them\n")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns

    edited = await run1(rt, "Edit", file_path=str(target), old_string="them", new_string="ours")
    assert not edited.is_error, edited.text()
    assert target.read_bytes() == b"ours\n"


async def test_an_8bit_file_written_as_ascii_reads_back_as_utf8(rt: Runtime, workspace: Path) -> None:
    # ASCII bytes decode as UTF-8, so after this Write a fresh read sees a UTF-8 file; the next Edit must
    # encode the way that read would, not in the cp1252 the file had before.
    target = workspace / "ansi.txt"
    target.write_bytes("caf\xe9\n".encode("cp1252"))
    await run1(rt, "Read", file_path=str(target))
    written = await run1(rt, "Write", file_path=str(target), content="plain ascii\n")
    assert not written.is_error, written.text()
    assert target.read_bytes() == b"plain ascii\n"
    edited = await run1(rt, "Edit", file_path=str(target), old_string="plain", new_string="caf\xe9")
    assert not edited.is_error, edited.text()
    assert target.read_bytes() == "caf\xe9 ascii\n".encode()


async def test_written_nul_bytes_still_make_it_a_binary_file(rt: Runtime, workspace: Path) -> None:
    target = workspace / "odd.txt"
    written = await run1(rt, "Write", file_path=str(target), content="a\x00b\n")
    assert not written.is_error, written.text()
    edited = await run1(rt, "Edit", file_path=str(target), old_string="b", new_string="c")
    assert edited.is_error and "binary" in edited.text()
    assert target.read_bytes() == b"a\x00b\n"


async def test_a_file_replaced_by_a_directory_is_reported(rt: Runtime, workspace: Path) -> None:
    target = workspace / "a.txt"
    await run1(rt, "Write", file_path=str(target), content="x\n")
    target.unlink()
    target.mkdir()
    result = await run1(rt, "Write", file_path=str(target), content="y\n")
    assert result.is_error and "is a directory" in result.text()
