"""The editor's buffers mirrored by LSP text sync: one typed character (a one-character didChange) in a 5 MB
buffer, applied by `toolgate.text.document_sync` and by the whole path a framed didChange takes through the
sidecar's pygls protocol (envelope, JSON, lsprotocol params, the mirror), against pygls's own
`TextDocument.apply_change` on the same buffer in the same run."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace import TextDocument

from bench.report import Figure, Report
from toolgate.sidecar.server import ToolgateServer
from toolgate.text.document_sync import Change, Position, Range, apply_change

SIZE = 5 * 1024 * 1024
KEYSTROKES = 40


def _buffer(newline: str) -> str:
    source = Path(__file__).read_text().replace("\n", newline)  # code: short and long lines, ASCII
    return (source * (SIZE // len(source) + 1))[:SIZE]


def _keystroke(report: Report, workdir: Path, where: str, text: str, line: int) -> None:
    # Typing from the start of the line: each character goes after the last one typed, so every position is in
    # range (pygls puts a position past the end of a line after its line break, unlike LSP).
    column = {"ours": 0, "pygls": 0, "handle": 0}
    ours_text = text
    pygls_doc = TextDocument("file:///bench.txt", text)
    path = workdir / "bench.txt"
    path.write_text(text, newline="")
    server = ToolgateServer()
    server.protocol.set_writer(_Discard())
    notify(server, "initialize", _INITIALIZE, msg_id=1)
    opened = {"textDocument": {"uri": path.as_uri(), "languageId": "py", "version": 1, "text": text}}
    notify(server, "textDocument/didOpen", opened)
    version = 1

    def ours() -> None:
        nonlocal ours_text
        position = Position(line, column["ours"])
        column["ours"] += 1
        ours_text = apply_change(ours_text, Change("x", Range(position, position)))

    def pygls() -> None:
        edit = lsp.Range(lsp.Position(line, column["pygls"]), lsp.Position(line, column["pygls"]))
        column["pygls"] += 1
        pygls_doc.apply_change(lsp.TextDocumentContentChangePartial(range=edit, text="x"))

    def handle() -> None:
        nonlocal version
        version += 1
        at = {"line": line, "character": column["handle"]}
        column["handle"] += 1
        change: dict[str, Any] = {"range": {"start": at, "end": at}, "rangeLength": 0, "text": "x"}
        params = {"textDocument": {"uri": path.as_uri(), "version": version}, "contentChanges": [change]}
        notify(server, "textDocument/didChange", params)

    samples: dict[str, list[float]] = {"ours": [], "pygls": [], "handle": []}
    runs: dict[str, Callable[[], None]] = {"ours": ours, "pygls": pygls, "handle": handle}
    for fn in runs.values():  # warm up (cattrs builds its structuring code on first use)
        fn()
    for _ in range(KEYSTROKES):  # interleaved, so all three see the same machine load
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    # All three typed the same characters at the same place: the same text, or the figures mean nothing.
    assert ours_text == pygls_doc.source == server.documents.text(path)

    baseline = statistics.median(samples["pygls"]) * 1000
    note = f"median of {KEYSTROKES}; {line} lines down"
    for name, label in (("ours", "document_sync.apply_change"), ("handle", "sidecar protocol.receive(didChange)")):
        report.add(
            Figure(
                "documents",
                f"1-char didChange, 5 MB buffer ({where}): {label}",
                statistics.median(samples[name]) * 1000,
                "ms",
                "pygls TextDocument.apply_change",
                baseline,
                note=note,
            )
        )


class _Discard:
    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass


_INITIALIZE = {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": {"storageDir": "/x"}}


def notify(server: ToolgateServer, method: str, params: Any, msg_id: int | None = None) -> None:
    """One framed body, as the transport hands it to the protocol."""
    message = {"jsonrpc": "2.0", "method": method, "params": params} | ({"id": msg_id} if msg_id else {})
    server.protocol.receive(json.dumps(message).encode())


def run(report: Report, workdir: Path) -> None:
    lf = _buffer("\n")
    _keystroke(report, workdir, "LF, middle", lf, lf.count("\n") // 2)
    crlf = _buffer("\r\n")
    _keystroke(report, workdir, "CRLF, near the end", crlf, crlf.count("\n") * 9 // 10)
