"""Framing of the sidecar's stdin: what is skipped, what is delivered, and when reading ends."""

from __future__ import annotations

import asyncio
import logging

import pytest

from toolgate.sidecar.transport import FramingError, read_messages

LINE_TOO_LONG = "a header line is longer than 65536 bytes"


def frame(body: bytes, content_type: bool = False) -> bytes:
    extra = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" if content_type else b""
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def read_all(data: bytes, max_bytes: int = 1 << 20) -> list[bytes | FramingError]:
    reader = asyncio.StreamReader(limit=64 * 1024)
    reader.feed_data(data)
    reader.feed_eof()
    return [body async for body in read_messages(reader, max_bytes)]


async def test_messages_with_and_without_content_type() -> None:
    assert await read_all(frame(b"{}") + frame(b"[1]", content_type=True)) == [b"{}", b"[1]"]


async def test_garbage_between_messages_is_skipped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    garbage = b"hello\r\nContent-Length: x\r\n" + b"y" * 100_000 + b"\n\r\n"
    with caplog.at_level(logging.WARNING):
        items = await read_all(frame(b"{}") + garbage + frame(b'{"a":1}'))
    assert items == [b"{}", FramingError(f"Skipped input that frames no message: {LINE_TOO_LONG}."), b'{"a":1}']
    assert "not JSON-RPC message headers" in caplog.text


async def test_end_of_input_inside_a_message_ends_reading(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert await read_all(frame(b"{}") + b"Content-Length: 10\r\n\r\n{") == [b"{}"]
    assert "ended in the middle of a message" in caplog.text


async def test_an_oversized_message_is_skipped_and_the_next_one_read(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        items = await read_all(frame(b"x" * 100) + frame(b"{}"), max_bytes=50)
    assert items == [FramingError("The message of 100 bytes is over the limit of 50 bytes."), b"{}"]
    assert "over the 50-byte limit" in caplog.text


BAD_BLOCKS = [
    (b"Content-Length: abc\r\n\r\n", "Content-Length 'abc' is not a byte count"),
    (b"Content-Length: -5\r\n\r\n", "Content-Length '-5' is not a byte count"),
    (b"Content-Length: 2\r\nnot a header\r\n\r\n", "'not a header' is not a header line"),
    (b"Content-Length: 1\r\nX: " + b"y" * 70_000 + b"\r\n\r\n", LINE_TOO_LONG),
]


@pytest.mark.parametrize(("block", "problem"), BAD_BLOCKS)
async def test_a_block_without_a_usable_length_is_reported_and_the_next_message_read(
    block: bytes, problem: str
) -> None:
    # No blank line after the bad block's "body": the next header is glued to it, as a careless client sends it.
    items = await read_all(block + b'{"lost":1}' + frame(b"{}"))
    assert items == [FramingError(f"Skipped input that frames no message: {problem}."), b"{}"]


async def test_a_length_shorter_than_the_body_loses_only_that_message() -> None:
    assert await read_all(b'Content-Length: 3\r\n\r\n{"a":1}' + frame(b"[2]")) == [b'{"a', b"[2]"]


async def test_a_header_block_glued_to_a_bad_one_is_read() -> None:
    items = await read_all(b"Content-Length: x\r\n" + frame(b"{}"))
    assert items == [
        FramingError("Skipped input that frames no message: Content-Length 'x' is not a byte count."),
        b"{}",
    ]


async def test_a_header_cut_across_reads_is_found() -> None:
    reader = asyncio.StreamReader(limit=64 * 1024)
    data = b"junk" * 10 + frame(b"{}")
    for i in range(len(data)):
        reader.feed_data(data[i : i + 1])
    reader.feed_eof()
    assert [item async for item in read_messages(reader)] == [b"{}"]


async def test_a_body_of_megabytes_across_many_reads_is_delivered_whole() -> None:
    big = b'{"content": "' + bytes(range(32, 127)) * 60_000 + b'"}'  # 5.7 MB
    data = frame(big) + frame(b"{}")
    reader = asyncio.StreamReader(limit=64 * 1024)
    for start in range(0, len(data), 100_000):  # the next message starts inside the big one's last read
        reader.feed_data(data[start : start + 100_000])
    reader.feed_eof()
    assert [item async for item in read_messages(reader, max_bytes=8 << 20)] == [big, b"{}"]
