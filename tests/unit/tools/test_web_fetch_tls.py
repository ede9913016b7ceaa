"""WebFetch over TLS to a loopback HTTP/2 server: h2 is negotiated, and the pinned connection still sends the
host's name (SNI, certificate check) although it dials 127.0.0.1."""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import pytest

from toolgate.testing import run1
from toolgate.tools._web_deps import TLS_CONTEXT

from .test_web_fetch import fetching, ok

BODY = b"<html><head><title>Over h2</title></head><body><h1>Served over HTTP/2</h1></body></html>"


@dataclass
class H2Server:
    port: int
    seen: list[tuple[str | None, str | None]] = field(default_factory=list)  # (SNI, ALPN) per connection


def _certificate(directory: Path) -> tuple[Path, Path]:
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=docs.test",
         "-addext", "subjectAltName=DNS:docs.test", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return key, cert


def _serve_one(tls: ssl.SSLSocket) -> None:
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    tls.sendall(conn.data_to_send())
    while True:
        data = tls.recv(65535)
        if not data:
            return
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                headers = [(":status", "200"), ("content-type", "text/html"), ("content-length", str(len(BODY)))]
                conn.send_headers(event.stream_id, headers)
                conn.send_data(event.stream_id, BODY, end_stream=True)
        tls.sendall(conn.data_to_send())


@pytest.fixture(scope="module")
def h2_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[H2Server, Path]]:
    key, cert = _certificate(tmp_path_factory.mktemp("tls"))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["h2", "http/1.1"])
    listener = socket.create_server(("127.0.0.1", 0))
    server = H2Server(listener.getsockname()[1])
    names: dict[int, str | None] = {}

    def remember_sni(sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, _ctx: ssl.SSLContext) -> None:
        names[id(sock)] = name

    context.sni_callback = remember_sni

    def accept() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return  # the listener was closed: the test module is done
            try:
                with context.wrap_socket(raw, server_side=True) as tls:
                    server.seen.append((names.get(id(tls)), tls.selected_alpn_protocol()))
                    _serve_one(tls)
            except (OSError, ssl.SSLError):
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server, cert
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not
        listener.close()
        thread.join(timeout=10)
        assert not thread.is_alive()


async def test_https_over_http2_with_the_name_kept_for_tls(workspace: Path, h2_server: tuple[H2Server, Path]) -> None:
    server, cert = h2_server
    async with fetching(workspace) as rt:
        rt.session.deps.override(TLS_CONTEXT, lambda: ssl.create_default_context(cafile=str(cert)))
        text = ok(await run1(rt, "WebFetch", url=f"https://docs.test:{server.port}/"))
    assert "# Served over HTTP/2" in text and "Title: Over h2" in text
    assert server.seen[-1] == ("docs.test", "h2")


async def test_a_certificate_for_another_name_is_refused(workspace: Path, h2_server: tuple[H2Server, Path]) -> None:
    """Pinning the address must not weaken the certificate check: other.test is not on the certificate."""
    server, cert = h2_server
    async with fetching(workspace, ["WebFetch(domain:other.test)"]) as rt:
        rt.session.deps.override(TLS_CONTEXT, lambda: ssl.create_default_context(cafile=str(cert)))
        result = await run1(rt, "WebFetch", url=f"https://other.test:{server.port}/")
    assert result.is_error and "certificate" in result.text().lower()
