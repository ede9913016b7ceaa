"""Where a value sits in a JSON text, so a schema error can name its line. Pure: no I/O.

The text has already been parsed by `json`, so this walker can assume it is well-formed; it only skips.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

_WS = " \t\r\n"


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _skip_string(text: str, i: int) -> int:
    i += 1  # opening quote
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    return i


def _read_string(text: str, i: int) -> tuple[str, int]:
    end = _skip_string(text, i)
    return str(json.loads(text[i:end])), end


def _skip_value(text: str, i: int) -> int:
    i = _skip_ws(text, i)
    if i >= len(text):
        return i
    ch = text[i]
    if ch == '"':
        return _skip_string(text, i)
    if ch in "{[":
        depth = 0
        while i < len(text):
            c = text[i]
            if c == '"':
                i = _skip_string(text, i)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i
    while i < len(text) and text[i] not in ",}]" + _WS:
        i += 1
    return i


def _child(text: str, i: int, key: str | int) -> int | None:
    """Offset of member `key` of the object/array starting at `i`, or None."""
    i = _skip_ws(text, i)
    if i >= len(text):
        return None
    if text[i] == "{" and isinstance(key, str):
        i = _skip_ws(text, i + 1)
        while i < len(text) and text[i] != "}":
            name, i = _read_string(text, i)
            i = _skip_ws(text, i) + 1  # the colon
            i = _skip_ws(text, i)
            if name == key:
                return i
            i = _skip_ws(text, _skip_value(text, i))
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
        return None
    if text[i] == "[" and isinstance(key, int):
        i = _skip_ws(text, i + 1)
        index = 0
        while i < len(text) and text[i] != "]":
            if index == key:
                return i
            i = _skip_ws(text, _skip_value(text, i))
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
            index += 1
    return None


def locate(text: str, path: Sequence[str | int]) -> tuple[int, int]:
    """(line, column), both 1-based, of the value at `path`, or of the deepest part of it that exists."""
    offset = _skip_ws(text, 0)
    for key in path:
        found = _child(text, offset, key)
        if found is None:
            break
        offset = found
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column
