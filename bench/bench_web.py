"""WebFetch on a 1 MB HTML page from a loopback server, through the full pipeline (permission check, address
checks, pinned connection, bounded body, conversion, storing the long page), against a plain httpx GET plus
the same HTML-to-Markdown conversion, measured in the same run. Goal: at most 1.3x.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx2

from bench.report import Figure, Report, median_us, time_async
from toolgate.core.messages import ToolUse
from toolgate.core.permission import PermissionMode
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover
from toolgate.tools._web_content import convert
from toolgate.tools._web_deps import RESOLVER
from toolgate.tools.web_fetch import WEB_ENVIRON

REPEAT = 8
HOST = "docs.bench"


def _page() -> bytes:
    row = "<tr><td><code>option_{i}</code></td><td>What option {i} does, with <a href='/x{i}'>a link</a>.</td></tr>"
    section = "<h2>Section {i}</h2><p>Some <b>documentation</b> text for section {i}.</p><ul><li>a</li><li>b</li></ul>"
    parts = ["<html><head><title>Bench</title><script>var x = 1;</script></head><body>"]
    i = 0
    while sum(len(p) for p in parts) < 1024 * 1024:
        parts.append(
            section.format(i=i) + "<table>" + "".join(row.format(i=i * 10 + j) for j in range(10)) + "</table>"
        )
        i += 1
    parts.append("</body></html>")
    return "".join(parts).encode()


def run(report: Report, workdir: Path) -> None:
    body = _page()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        anyio.run(_run, report, workdir, server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


async def _run(report: Report, workdir: Path, port: int) -> None:
    runtime = build_runtime(
        workdir,
        AllowingApprover(),
        RuntimeOptions(mode=PermissionMode.DEFAULT, rules={"allow": [f"WebFetch(domain:{HOST})"]}, read_settings=False),
    )

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    runtime.session.deps.override(RESOLVER, resolve)
    runtime.session.deps.override(WEB_ENVIRON, {})
    counter = iter(range(10**9))
    url = f"http://{HOST}:{port}/docs"

    async def tool() -> None:
        use = ToolUse(id=f"w{next(counter)}", name="WebFetch", input={"url": url})
        [result] = await runtime.orchestrator.run_turn([use])
        assert not result.is_error, result.text()

    async with httpx2.AsyncClient() as client:

        async def plain() -> None:
            response = await client.get(f"http://127.0.0.1:{port}/docs")
            convert(response.content, response.headers.get("content-type"), "bench")

        # Interleaved, so that a machine whose load changes during the run slows both sides alike.
        await plain()
        await tool()
        plain_samples: list[float] = []
        tool_samples: list[float] = []
        for _ in range(REPEAT):
            plain_samples += await time_async(plain, 1, warmup=0)
            tool_samples += await time_async(tool, 1, warmup=0)
    report.add(
        Figure(
            "web",
            "WebFetch 1 MB HTML page (loopback)",
            median_us(tool_samples) / 1000,
            "ms",
            "httpx GET + the same conversion",
            median_us(plain_samples) / 1000,
            note="goal ≤ 1.3×",
        )
    )
    await runtime.aclose()
