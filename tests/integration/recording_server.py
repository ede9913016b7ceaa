"""An HTTP/1.1 server on 127.0.0.1 for the sandbox's network tests: it records each request's path and body and
answers with `reply(path)`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RecordingServer:
    def __init__(self, reply: Callable[[str], bytes]) -> None:
        self.seen: list[tuple[str, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.seen.append((self.path, body))
                answer = reply(self.path)
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST = _answer

            def log_message(self, *_args: object) -> None:
                pass  # the test says what it saw

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.seen]


@contextmanager
def recording_server(reply: Callable[[str], bytes]) -> Iterator[RecordingServer]:
    server = RecordingServer(reply)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join()
