"""Finding text in a stored conversation while reading little more than its bytes.

Search looks only at text blocks (prompts and answers, `transcript_export.find_text`), and those are a small part
of a transcript: most of its bytes are tool results. So instead of parsing every line, the raw bytes are scanned
for the opening the transcript's writer gives every text block, each block's string is checked on its own
(decoded as JSON when it holds an escape or non-ASCII, so quotes, backslashes, newlines and case folding behave
exactly as in the parsed text), and only the line of a block that holds the query is parsed, to confirm it is a
message of the conversation and to cut the snippet. The answer is the one parsing the whole transcript gives.

The scan relies on the writer's form: pydantic writes a text block as `{"type":"text","text":"…"}`, with no
spaces and `type` first (the field order of `TextBlock`; tests pin it). A string that is not valid JSON (a line a
crash cut short, an edit by hand) makes the whole transcript be parsed instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from toolgate.agent.transcript import ENTRY, MessageEntry, load_transcript
from toolgate.agent.transcript_export import find_text

TEXT_BLOCK_OPENING = b'{"type":"text","text":"'
_BACKSLASH = ord("\\")
# A string JSON holds as it is written: printable ASCII, no backslash. Any other is decoded, which also refuses a
# line break in it (a string cut short by a crash runs on into the next line).
_VERBATIM = re.compile(rb"[\x20-\x5b\x5d-\x7f]*")


def find_in_transcript(path: Path, raw: bytes, query: str) -> str | None:
    """`find_text(load_transcript(path).history, query)` for the transcript whose bytes are `raw`."""
    try:
        return _find_in_text_blocks(raw, query)
    except ValueError:  # a text block's string is not valid JSON: only the parser knows what its line holds
        return find_text(load_transcript(path).history, query)


def _find_in_text_blocks(raw: bytes, query: str) -> str | None:
    wanted = query.lower()
    searched_to = 0  # the lines before this offset were parsed already
    for at, text in _text_blocks(raw):
        if at < searched_to or wanted not in text.lower():
            continue
        start, end = _line_around(raw, at)
        searched_to = end
        try:
            entry = ENTRY.validate_json(raw[start:end])
        except ValidationError:  # unreadable, or a kind a newer version wrote: loading skips it too
            continue
        if isinstance(entry, MessageEntry):  # not a summary's head, a child agent's record or the like
            found = find_text([entry.message], query)
            if found is not None:  # the first block that holds it (earlier lines held none)
                return found
    return None


def _text_blocks(raw: bytes) -> Iterator[tuple[int, str]]:
    """Every text block's offset and text, in the order they are written (one at a time: a search stops at the
    first that holds the query); ValueError: a string is not JSON."""
    at = raw.find(TEXT_BLOCK_OPENING)
    while at >= 0:
        opened = at + len(TEXT_BLOCK_OPENING)
        closed = _string_end(raw, opened)
        string = raw[opened:closed]
        text: str = string.decode() if _VERBATIM.fullmatch(string) else json.loads(raw[opened - 1 : closed + 1])
        yield at, text
        at = raw.find(TEXT_BLOCK_OPENING, closed)


def _string_end(raw: bytes, opened: int) -> int:
    """The offset of the quote that ends the JSON string starting at `opened`: the first one no backslash escapes."""
    end = raw.find(b'"', opened)
    while end >= 0:
        escaped = end
        while escaped > opened and raw[escaped - 1] == _BACKSLASH:
            escaped -= 1
        if (end - escaped) % 2 == 0:  # an even run of backslashes escapes only itself
            return end
        end = raw.find(b'"', end + 1)
    raise ValueError("a text block's string never ends (a line cut short)")


def _line_around(raw: bytes, at: int) -> tuple[int, int]:
    """The line holding offset `at`, split as `load_transcript` splits lines (at \\n, \\r or both)."""
    after_newline = raw.rfind(b"\n", 0, at) + 1
    start = max(after_newline, raw.rfind(b"\r", after_newline, at) + 1)
    end = raw.find(b"\n", at)
    end = len(raw) if end < 0 else end
    carriage_return = raw.find(b"\r", at, end)
    return start, end if carriage_return < 0 else carriage_return
