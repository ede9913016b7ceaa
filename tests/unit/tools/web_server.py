"""A loopback HTTP server for the WebFetch tests: 127.0.0.1 only, started and stopped by a fixture.

Routes cover what a hostile or merely awkward web serves: charsets in headers and in <meta>, a 20 MB body, a
gzip bomb, a slow drip, redirect chains (same host, another host, 127.0.0.1, file:), JSON, a PDF, a PNG.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from tests.unit.tools.test_read_media import make_pdf, png

BIG_BYTES = 20 * 1024 * 1024
BOMB_DECODED_BYTES = 200 * 1024 * 1024


@dataclass
class Route:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    stream: Callable[[BaseHTTPRequestHandler], None] | None = None


def _big(handler: BaseHTTPRequestHandler) -> None:
    chunk = b"x" * 1023 + b"\n"
    try:
        for _ in range(BIG_BYTES // len(chunk)):
            handler.wfile.write(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client stopped at its cap: that is the point


def _drip(handler: BaseHTTPRequestHandler) -> None:
    try:
        for _ in range(600):  # a byte at a time, each well within any read timeout; never finishes in time
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(0.05)
    except (BrokenPipeError, ConnectionResetError):
        pass


def _bomb() -> bytes:
    # 200 MB of zeros compresses to about 200 KB.
    block = bytes(1024 * 1024)
    out = gzip.compress(block * (BOMB_DECODED_BYTES // len(block)), compresslevel=9)
    return out


class WebServer:
    def __init__(self, tmp: Path) -> None:
        self.requests: list[tuple[str, str]] = []  # (Host header, path) of every request that arrived
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        pdf = tmp / "doc.pdf"
        make_pdf(pdf, 2)
        html = "<html><head><title>Caf\u00e9 docs</title><style>p{}</style><script>alert(1)</script></head>"
        html += (
            "<body><h1>Caf\u00e9</h1><p>Une <b>cr\u00e8me</b> br\u00fbl\u00e9e.</p><ul><li>one</li></ul></body></html>"
        )
        meta = '<html><head><meta charset="windows-1252"><title>t</title></head>'
        meta += "<body><p>\u201cquoted\u201d</p></body></html>"
        long_html = "<html><body>" + "".join(f"<p>paragraph {i} {'word ' * 20}</p>" for i in range(3000)) + "</body>"
        port = self.port
        self.routes: dict[str, Route] = {
            "/page": Route(headers={"Content-Type": "text/html; charset=iso-8859-1"}, body=html.encode("latin-1")),
            "/meta": Route(headers={"Content-Type": "text/html"}, body=meta.encode("cp1252")),
            "/long": Route(headers={"Content-Type": "text/html; charset=utf-8"}, body=long_html.encode()),
            "/plain": Route(headers={"Content-Type": "text/plain; charset=utf-8"}, body="h\u00e9llo\n".encode()),
            "/json": Route(headers={"Content-Type": "application/json"}, body=b'{"b":[1,2],"a":"\\u00e9"}'),
            "/pdf": Route(headers={"Content-Type": "application/pdf"}, body=pdf.read_bytes()),
            "/png": Route(headers={"Content-Type": "image/png"}, body=png(3000, 1500)),
            "/zip": Route(headers={"Content-Type": "application/zip"}, body=b"PK\x03\x04"),
            "/missing": Route(404, {"Content-Type": "text/html"}, b"<h1>Not here</h1>"),
            "/big": Route(headers={"Content-Type": "text/plain"}, stream=_big),
            "/bigbin": Route(headers={"Content-Type": "application/pdf"}, stream=_big),
            "/bomb": Route(headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"}, body=_bomb()),
            "/drip": Route(headers={"Content-Type": "text/plain"}, stream=_drip),
            "/hop1": Route(302, {"Location": "/hop2"}),
            "/hop2": Route(301, {"Location": f"http://docs.test:{port}/page"}),
            "/cross": Route(302, {"Location": f"http://other.test:{port}/page"}),
            "/to-loopback": Route(302, {"Location": f"http://127.0.0.1:{port}/page"}),
            "/to-file": Route(302, {"Location": "file:///etc/passwd"}),
            "/loop": Route(302, {"Location": "/loop"}),
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = urlsplit(self.path).path  # a proxied request names the absolute URL
                server.requests.append((self.headers.get("Host", ""), self.path))
                route = server.routes.get(path, Route(404, {"Content-Type": "text/plain"}, b"no such route"))
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.stream is None:
                    self.send_header("Content-Length", str(len(route.body)))
                    self.end_headers()
                    self.wfile.write(route.body)
                    return
                self.send_header("Connection", "close")
                self.end_headers()
                route.stream(self)
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                return None

        return Handler

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def serve(tmp: Path) -> Iterator[WebServer]:
    server = WebServer(tmp)
    server.start()
    try:
        yield server
    finally:
        server.stop()
