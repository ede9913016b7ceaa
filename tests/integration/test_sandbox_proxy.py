"""The egress proxy itself, over its unix socket: each request on a client connection is checked, a pipelined or
kept-alive second request included (without a sandbox in between, so the bytes arrive exactly as sent)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from tests.integration.recording_server import RecordingServer, recording_server

from toolgate.sandbox.proxy import Channel, EgressProxy


@pytest.fixture
def upstream() -> Iterator[RecordingServer]:
    with recording_server(lambda path: f"reply to {path}".encode()) as server:
        yield server


@pytest.fixture
def channel() -> Iterator[Channel]:
    proxy = EgressProxy(("127.0.0.1",))  # a rule naming the loopback address exactly
    try:
        yield proxy.open_channel()
    finally:
        proxy.close()


def exchange(channel: Channel, data: bytes) -> bytes:
    """Send `data` at once on one connection, then end it (no more requests), and read every answer until the
    proxy closes it."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(20)
        client.connect(str(channel.socket))
        client.sendall(data)
        client.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := client.recv(65536):
            received += chunk
        return received


def test_a_pipelined_second_request_to_a_denied_host_is_refused(upstream: RecordingServer, channel: Channel) -> None:
    first = f"GET http://127.0.0.1:{upstream.port}/first HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    second = "GET http://evil.test/second HTTP/1.1\r\nHost: evil.test\r\n\r\n"
    answer = exchange(channel, (first + second).encode())
    assert b"reply to /first" in answer
    assert b"HTTP/1.1 403 Forbidden" in answer.split(b"reply to /first", 1)[1]
    assert [path for path, _ in upstream.seen] == ["/first"]
    assert [b.target for b in channel.blocked] == ["evil.test:80"]


def test_a_second_allowed_request_on_the_same_connection_is_served(upstream: RecordingServer, channel: Channel) -> None:
    head = f"GET http://127.0.0.1:{upstream.port}/%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    answer = exchange(channel, (head % "one" + head % "two").encode())
    assert b"reply to /one" in answer and b"reply to /two" in answer
    assert [path for path, _ in upstream.seen] == ["/one", "/two"]
    assert channel.blocked == []


def test_a_request_hidden_in_a_body_goes_upstream_as_body_and_the_next_one_is_checked(
    upstream: RecordingServer, channel: Channel
) -> None:
    hidden = b"GET http://evil.test/in-body HTTP/1.1\r\nHost: evil.test\r\n\r\n"
    post = f"POST http://127.0.0.1:{upstream.port}/post HTTP/1.1\r\nContent-Length: {len(hidden)}\r\n\r\n"
    after = b"GET http://evil.test/after HTTP/1.1\r\n\r\n"
    answer = exchange(channel, post.encode() + hidden + after)
    assert upstream.seen == [("/post", hidden)]
    assert b"reply to /post" in answer and b"403 Forbidden" in answer
    assert [b.target for b in channel.blocked] == ["evil.test:80"]
