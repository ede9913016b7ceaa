"""Framing of the sidecar's stdin: what is skipped, what is delivered, and when reading ends."""

from __future__ import annotations

import asyncio
import logging

import pytest

from toolgate.sidecar.transport import read_messages


def frame(body: bytes, content_type: bool = False) -> bytes:
    extra = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" if content_type else b""
    return b"Content-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def read_all(data: bytes, max_bytes: int = 1 << 20) -> list[bytes]:
    reader = asyncio.StreamReader(limit=64 * 1024)
    reader.feed_data(data)
    reader.feed_eof()
    return [body async for body in read_messages(reader, max_bytes)]


async def test_messages_with_and_without_content_type() -> None:
    assert await read_all(frame(b"{}") + frame(b"[1]", content_type=True)) == [b"{}", b"[1]"]


async def test_garbage_between_messages_is_skipped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    garbage = b"hello\r\nContent-Length: x\r\n" + b"y" * 100_000 + b"\n\r\n"
    with caplog.at_level(logging.WARNING):
        assert await read_all(frame(b"{}") + garbage + frame(b'{"a":1}')) == [b"{}", b'{"a":1}']
    assert "not JSON-RPC message headers" in caplog.text


async def test_end_of_input_inside_a_message_ends_reading(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert await read_all(frame(b"{}") + b"Content-Length: 10\r\n\r\n{") == [b"{}"]
    assert "ended in the middle of a message" in caplog.text


async def test_an_oversized_message_ends_reading(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        assert await read_all(frame(b"x" * 100) + frame(b"{}"), max_bytes=50) == []
    assert "over the 50-byte limit" in caplog.text
