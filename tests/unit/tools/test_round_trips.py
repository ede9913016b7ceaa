"""Byte-exact round trips: an Edit or Write changes only the bytes it means to, in the file's own conventions."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from toolgate.runtime import Runtime
from toolgate.testing import run1
from toolgate.text.encoding import decode

# (name, original bytes, expected bytes after replacing "beta" with "BETA") — each spelled out byte by byte.
CASES: list[tuple[str, bytes, bytes]] = [
    ("utf-8", "alpha é\nbeta ✓\ngamma\n".encode(), "alpha é\nBETA ✓\ngamma\n".encode()),
    (
        "utf-8 BOM",
        codecs.BOM_UTF8 + b"alpha\nbeta\n",
        codecs.BOM_UTF8 + b"alpha\nBETA\n",
    ),
    (
        "utf-16-le BOM CRLF",
        codecs.BOM_UTF16_LE + "alpha\r\nbeta ☃\r\n".encode("utf-16-le"),
        codecs.BOM_UTF16_LE + "alpha\r\nBETA ☃\r\n".encode("utf-16-le"),
    ),
    (
        "utf-16-be BOM",
        codecs.BOM_UTF16_BE + "alpha\nbeta\n".encode("utf-16-be"),
        codecs.BOM_UTF16_BE + "alpha\nBETA\n".encode("utf-16-be"),
    ),
    (
        "cp1252",
        "caf\u00e9 \u201csmart\u201d\nbeta \u20ac\n".encode("cp1252"),
        "caf\u00e9 \u201csmart\u201d\nBETA \u20ac\n".encode("cp1252"),
    ),
    # 0x81 is undefined in cp1252, so this one can only be latin-1.
    ("latin-1", b"a\x81\xe9\nbeta\n", b"a\x81\xe9\nBETA\n"),
    ("CRLF", b"alpha\r\nbeta\r\ngamma\r\n", b"alpha\r\nBETA\r\ngamma\r\n"),
    ("mixed endings", b"alpha\r\nbeta\ngamma\r\ndelta\n", b"alpha\r\nBETA\ngamma\r\ndelta\n"),
    ("no final newline", b"alpha\nbeta", b"alpha\nBETA"),
    ("CRLF no final newline", b"alpha\r\nbeta", b"alpha\r\nBETA"),
    ("lone CR kept", b"alpha\rstill one line\nbeta\n", b"alpha\rstill one line\nBETA\n"),
]


@pytest.mark.parametrize(("name", "original", "expected"), CASES, ids=[c[0] for c in CASES])
async def test_edit_round_trip(rt: Runtime, workspace: Path, name: str, original: bytes, expected: bytes) -> None:
    target = workspace / "f.txt"
    target.write_bytes(original)
    assert not (await run1(rt, "Read", file_path=str(target))).is_error
    result = await run1(rt, "Edit", file_path=str(target), old_string="beta", new_string="BETA")
    assert not result.is_error, result.text()
    assert target.read_bytes() == expected


@pytest.mark.parametrize(("name", "original", "expected"), CASES, ids=[c[0] for c in CASES])
async def test_write_of_the_same_text_changes_no_byte(
    rt: Runtime, workspace: Path, name: str, original: bytes, expected: bytes
) -> None:
    target = workspace / "f.txt"
    target.write_bytes(original)
    assert not (await run1(rt, "Read", file_path=str(target))).is_error
    text = decode(original).text
    result = await run1(rt, "Write", file_path=str(target), content=text)
    assert not result.is_error, result.text()
    assert target.read_bytes() == original


async def test_multi_line_edit_in_a_mixed_file_keeps_every_untouched_ending(rt: Runtime, workspace: Path) -> None:
    target = workspace / "f.txt"
    target.write_bytes(b"one\r\ntwo\nthree\r\nfour\nfive\r\n")
    await run1(rt, "Read", file_path=str(target))
    result = await run1(rt, "Edit", file_path=str(target), old_string="two\nthree", new_string="2\n2.5\n3")
    assert not result.is_error, result.text()
    # "two" and "three" keep their own endings; the added line gets the file's majority style (CRLF).
    assert target.read_bytes() == b"one\r\n2\n2.5\r\n3\r\nfour\nfive\r\n"


async def test_write_keeps_crlf_when_content_uses_lf_and_says_so(rt: Runtime, workspace: Path) -> None:
    target = workspace / "f.txt"
    target.write_bytes(b"a\r\nb\r\n")
    await run1(rt, "Read", file_path=str(target))
    result = await run1(rt, "Write", file_path=str(target), content="x\ny\nz\n")
    assert not result.is_error
    assert target.read_bytes() == b"x\r\ny\r\nz\r\n"
    assert "CRLF line endings were kept" in result.text() and "Updated" in result.text()


async def test_write_of_explicit_crlf_is_written_as_sent(rt: Runtime, workspace: Path) -> None:
    target = workspace / "new.txt"
    result = await run1(rt, "Write", file_path=str(target), content="x\r\ny\n")
    assert not result.is_error and "Created" in result.text()
    assert target.read_bytes() == b"x\r\ny\n"


async def test_write_keeps_a_utf16_file_utf16(rt: Runtime, workspace: Path) -> None:
    target = workspace / "f.txt"
    target.write_bytes(codecs.BOM_UTF16_LE + "old\n".encode("utf-16-le"))
    await run1(rt, "Read", file_path=str(target))
    result = await run1(rt, "Write", file_path=str(target), content="new ☃\n")
    assert not result.is_error
    assert target.read_bytes() == codecs.BOM_UTF16_LE + "new ☃\n".encode("utf-16-le")
    assert "utf-16-le" in result.text()
