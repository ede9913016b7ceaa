"""Turn a pydantic ValidationError into plain words that name each bad field.

The model never sees a raw pydantic dump: it sees which parameter is missing, which one it invented, and
which one has the wrong type (expected vs got), plus the parameters the tool does accept.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

_TYPE_WORDS = {
    "string": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean (true or false)",
    "list": "an array",
    "dict": "an object",
    "model": "an object",
    "literal": "one of the allowed values",
    "enum": "one of the allowed values",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _show(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _path(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(input)"


def _expected_from_type(error_type: str) -> str | None:
    base = error_type.removesuffix("_type").removesuffix("_parsing")
    if base in _TYPE_WORDS:
        return _TYPE_WORDS[base]
    if base.startswith("int"):
        return _TYPE_WORDS["int"]
    if base.startswith("float"):
        return _TYPE_WORDS["float"]
    return None


def describe_issue(error: dict[str, Any]) -> str:
    kind: str = error["type"]
    where = f"`{_path(error['loc'])}`"
    value = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return f"the required parameter {where} is missing"
    if kind == "extra_forbidden":
        return f"{where} is not a parameter of this tool; remove it"
    if kind in ("literal_error", "enum"):
        expected = ctx.get("expected", "the allowed values")
        return f"{where} must be one of {expected}, but got {_show(value)}"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        expected = _expected_from_type(kind) or kind
        return f"{where} should be {expected}, but got {_json_type(value)} ({_show(value)})"
    comparisons = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("greater than", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
    }
    if kind in comparisons:
        words, key = comparisons[kind]
        return f"{where} must be {words} {ctx.get(key)}, but got {_show(value)}"
    if kind == "string_too_short":
        return f"{where} must not be empty" if ctx.get("min_length") == 1 else f"{where} is too short"
    if kind == "string_too_long":
        return f"{where} is too long (at most {ctx.get('max_length')} characters)"
    if kind in ("too_short", "too_long"):
        return f"{where} has the wrong number of items: {error.get('msg', '')}".rstrip(": ")
    if kind == "value_error":
        # Our own validators raise ValueError with a full sentence; pydantic prefixes "Value error, ".
        return f"{where}: {str(error.get('msg', '')).removeprefix('Value error, ')}"
    return f"{where}: {str(error.get('msg', 'is invalid')).lower()}"


def describe_validation_error(tool_name: str, exc: ValidationError, accepted: Sequence[str]) -> str:
    issues = [describe_issue(dict(e)) for e in exc.errors(include_url=False)]
    header = f"The input for {tool_name} does not match its schema:"
    lines = [header, *(f"- {issue}" for issue in issues)]
    if accepted:
        lines.append(f"{tool_name} accepts: {', '.join(accepted)}. Fix the input and call it again.")
    return "\n".join(lines)
