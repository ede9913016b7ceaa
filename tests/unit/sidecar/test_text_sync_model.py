"""Text sync through the pygls-wired path (framed didOpen/didChange → ToolgateProtocol → the mirror) against a
model written from the LSP spec: lines end at \\n, \\r\\n or \\r and nowhere else, and a position's `character`
counts code units of the negotiated encoding. The text holds every character `str.splitlines` (and so pygls's
TextDocument) would also break a line at."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.sidecar.in_process import text_sync

# LSP line breaks, then the characters that are breaks to str.splitlines but not to LSP, then wide characters.
ALPHABET = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "a", "é", "€", "😀"]
texts = st.lists(st.sampled_from(ALPHABET), max_size=30).map("".join)
PATH = Path("/nonexistent/model.txt")
URI = PATH.as_uri()
UNITS = {"utf-16": lambda s: len(s.encode("utf-16-le")) // 2, "utf-8": lambda s: len(s.encode()), "utf-32": len}


def spec_lines(text: str) -> list[str]:
    """Each line with its break, as the LSP spec splits a document (the last line may be empty)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text) + ([""] if not text or text[-1] in "\r\n" else [])


def spec_offset(lines: list[str], line: int, column: int) -> int:
    """The offset in code points of the position (line, `column` code points into it)."""
    return sum(len(before) for before in lines[:line]) + column


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(UNITS)), texts, st.data())
def test_random_edits_through_the_server_give_the_spec_s_text(encoding: str, text: str, data: st.DataObject) -> None:
    docs, notify = text_sync(read_disk=lambda _path: b"", encodings=(encoding,))
    notify("textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "x", "version": 1, "text": text}})
    model = text
    for version in range(2, 2 + data.draw(st.integers(1, 6))):
        lines = spec_lines(model)
        ends = []
        for _ in range(2):
            line = data.draw(st.integers(0, len(lines) - 1))
            content = lines[line].rstrip("\r\n") if lines[line].endswith(("\r", "\n")) else lines[line]
            column = data.draw(st.integers(0, len(content)))
            ends.append((line, column, {"line": line, "character": UNITS[encoding](content[:column])}))
        (start, end) = sorted(ends, key=lambda e: (e[0], e[1]))
        inserted = data.draw(texts)
        model = model[: spec_offset(lines, start[0], start[1])] + inserted + model[spec_offset(lines, end[0], end[1]) :]
        change = {"range": {"start": start[2], "end": end[2]}, "text": inserted}
        notify("textDocument/didChange", {"textDocument": {"uri": URI, "version": version}, "contentChanges": [change]})
        assert docs.text(PATH) == model
