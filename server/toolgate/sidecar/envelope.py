"""What a framed message body must be before anything else reads it: UTF-8 JSON, shallow enough, one JSON-RPC 2.0
object with a usable id.

`decode` turns any body into one of three things and never raises: a `Message` (a request, notification or response
whose envelope is sound), a `Refusal` (the JSON-RPC error the spec gives for it, and whether it is answered at all),
or a `BrokenResponse` (an answer to one of our requests that cannot be read; whoever waits for it must be told).

Nesting is limited to MAX_DEPTH levels, far below what the interpreter can take (`json.loads` gives up near a
thousand, minus the stack the reader already uses; pydantic and json.dumps recurse too). The message is parsed by
`json.loads` alone (its C parser checks the recursion limit and fails cleanly with RecursionError; a RecursionError
is the refusal, without the id) before its depth is checked, so that a message too deep is answered with its own id
and the path to the part that is too deep. The depth is found by walking the parsed message when it has few
containers (a big Write is one big string), and measured on the text in C when it has many.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# Deepest nesting accepted, counted from the message object itself (a tools/run call's input sits at level 5).
MAX_DEPTH = 64
# Ids are echoed back; editors read them as IEEE doubles, so only integers a double holds exactly are ids.
MAX_EXACT_INTEGER = 2**53 - 1
VERSION = "2.0"

_STRING = re.compile(rb'"[^"]*"')
_AS_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("]"): -1}


@dataclass(frozen=True)
class Message:
    """A sound JSON-RPC 2.0 object: `kind` is "request", "notification" or "response"."""

    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Refusal:
    """The error answer for a body that is not a usable message. `answer` is False for what must get none."""

    code: int
    message: str
    id: int | str | None = None
    answer: bool = True


@dataclass(frozen=True)
class BrokenResponse:
    """An answer to request `id` that cannot be read (its error member is not an error object, say)."""

    id: int | str
    reason: str


Decoded = Message | Refusal | BrokenResponse


def nesting_depth(body: bytes) -> int:
    """How deeply arrays and objects nest in the JSON text `body` (exact for valid JSON; 0 for a scalar).

    Measured on the text, without parsing it, in time linear in its length: escaped backslashes and quotes go
    first (only they can hide a string's end), then whole strings (brackets in them do not nest); of the rest only
    the brackets stay, all made square. For a message whose bulk is text, such as a file's content, that is a short
    run. Every innermost `[]` is one level; removing them all at once (in C) leaves far fewer steps to count."""
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = _STRING.sub(b"", unescaped).translate(_AS_SQUARE, _NOT_BRACKETS)
    if not brackets:
        return 0
    outer = brackets.replace(b"[]", b"")
    return 1 + max(accumulate(map(_STEP.__getitem__, outer)), default=0)


class _OverBudget:
    """What `_walk` answers when it ran out of steps before it could tell."""


_OVER_BUDGET = _OverBudget()


def too_deep(value: Any, limit: int = MAX_DEPTH) -> tuple[str | int, ...] | None:
    """The path to the first array or object nested deeper than `limit` levels in `value`, or None.

    Iterative (a stack of iterators, one per open container), so a value nested as deep as `json.loads` allows
    is walked without recursion; the path is only the keys of the containers open at the moment."""
    found = _walk(value, limit, budget=None)
    assert not isinstance(found, _OverBudget)
    return found


def _walk(value: Any, limit: int, budget: int | None) -> tuple[str | int, ...] | _OverBudget | None:
    """`too_deep`, giving up with _OVER_BUDGET after `budget` members and elements stepped over (None: never)."""
    if not isinstance(value, dict | list):
        return None
    stack: list[Iterator[tuple[str | int, Any]]] = [_children(value)]
    path: list[str | int] = []
    while stack:
        for key, child in stack[-1]:
            if budget is not None:
                budget -= 1
                if budget < 0:
                    return _OVER_BUDGET
            if isinstance(child, dict | list):
                if len(stack) >= limit:
                    return (*path, key)
                path.append(key)
                stack.append(_children(child))
                break
        else:
            stack.pop()
            if path:
                path.pop()
    return None


def _children(container: dict[str, Any] | list[Any]) -> Iterator[tuple[str | int, Any]]:
    return iter(container.items()) if isinstance(container, dict) else enumerate(container)


def field_path(path: tuple[str | int, ...]) -> str:
    """`params.calls[0].input`: how a path inside a message is named in errors (the first few steps of it)."""
    text = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path[:6]).lstrip(".")
    return text + ("…" if len(path) > 6 else "")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def is_exact_id(value: Any) -> bool:
    """A JSON-RPC id toolgate accepts: a string, or an integer an IEEE double holds exactly (never a bool)."""
    if isinstance(value, str):
        return True
    return type(value) is int and -MAX_EXACT_INTEGER <= value <= MAX_EXACT_INTEGER


def _describe(value: Any) -> str:
    if isinstance(value, float):
        text = repr(value) if math.isfinite(value) else "a number out of range"
    elif isinstance(value, bool | int | str | type(None)):
        text = json.dumps(value)
    else:
        text = "an object" if isinstance(value, dict) else "an array"
    return text if len(text) <= 40 else text[:40] + "…"


# One decoder for every message: json.loads with an option makes a new one each time (a microsecond a message).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def decode(body: bytes) -> Decoded:
    """Read one message body; every problem becomes the refusal the JSON-RPC 2.0 spec gives for it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(PARSE_ERROR, f"The message is not UTF-8 text (byte {exc.start}); send UTF-8 encoded JSON.")
    try:
        if text.startswith("\ufeff"):  # what json.loads says of it (the decoder alone would not name it)
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        data = _DECODER.decode(text)
    except RecursionError:
        return Refusal(INVALID_REQUEST, _too_deep_text("The message"))
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, an integer with too many digits
        return Refusal(PARSE_ERROR, f"The message is not valid JSON ({exc}).")
    if isinstance(data, list):
        return Refusal(
            INVALID_REQUEST,
            "Batches are not supported (nothing in this one was run); send each message on its own."
            if data
            else "An empty array is not a message.",
        )
    if not isinstance(data, dict):
        return Refusal(INVALID_REQUEST, f"A message must be a JSON object, not {_describe(data)}.")
    deep = _deepest_path(body, data)
    decoded = _envelope(data)
    return decoded if deep is None else _refuse_deep(decoded, deep)


# Members and elements of the parsed message walked before the text is measured instead: a big message is nearly
# always a big string (a file's content) in a handful of containers, walked in microseconds, where measuring the
# text costs passes over all of it (several times the parse, for code full of escapes and brackets).
_WALK_BUDGET = 2048


# Below this size a message's brackets are counted first (two passes in C, a fraction of a microsecond for a
# tools/run call; a megabyte costs 0.6 ms, half a parse, and is walked or measured as below).
_COUNTED_BELOW = 2048


def _deepest_path(body: bytes, data: dict[str, Any]) -> tuple[str | int, ...] | None:
    """The path to the part of `data` nested too deep, or None; `body` is the text it was parsed from."""
    # Every level of nesting opens with a bracket (brackets inside strings only add to the count): a message with
    # no more of them than the limit is not too deep, and need not be walked (3 µs for a tools/run call).
    if len(body) < _COUNTED_BELOW and body.count(b"{") + body.count(b"[") <= MAX_DEPTH:
        return None
    found = _walk(data, MAX_DEPTH, budget=_WALK_BUDGET)
    if not isinstance(found, _OverBudget):
        return found
    # Mostly structure: the text is measured in C, and only a message that is too deep is walked in full.
    return too_deep(data) if nesting_depth(body) > MAX_DEPTH else None


def _refuse_deep(decoded: Decoded, deep: tuple[str | int, ...]) -> Decoded:
    if isinstance(decoded, Refusal):
        return decoded  # refused for a reason of its own already
    if isinstance(decoded, BrokenResponse):
        return decoded
    msg_id = decoded.data.get("id")
    if decoded.kind == "response" and isinstance(msg_id, int | str):
        return BrokenResponse(msg_id, _too_deep_text(f"the answer's `{field_path(deep)}`"))
    if deep[0] == "params":
        code, text = INVALID_PARAMS, _too_deep_text(f"`{field_path(deep[1:])}`")
    else:
        code, text = INVALID_REQUEST, _too_deep_text(f"`{field_path(deep)}`")
    # A notification gets no answer, not even an error one: it is refused in the log only.
    return Refusal(code, text, msg_id, answer=decoded.kind == "request")


def _too_deep_text(what: str) -> str:
    limit = f"the limit of {MAX_DEPTH} levels"
    return f"{what[0].upper()}{what[1:]} nests arrays and objects deeper than {limit}; send flatter JSON."


def _envelope(data: dict[str, Any]) -> Decoded:
    has_id = "id" in data
    msg_id = data.get("id")
    answer_id = msg_id if has_id and is_exact_id(msg_id) else None
    if "method" not in data and ("result" in data or "error" in data):
        return _response(data, answer_id)
    if data.get("jsonrpc") != VERSION:
        return Refusal(
            INVALID_REQUEST, f'A message needs "jsonrpc": "2.0", not {_describe(data.get("jsonrpc"))}.', answer_id
        )
    method = data.get("method")
    if not isinstance(method, str) or not method:
        return Refusal(INVALID_REQUEST, f'"method" must be a non-empty string, not {_describe(method)}.', answer_id)
    if has_id and answer_id is None:
        return Refusal(
            INVALID_REQUEST,
            f'"id" must be a string or an integer within ±(2^53-1), not {_describe(msg_id)}; the request was not run.',
        )
    params = data.get("params")
    # null is no structured value, but some clients (pygls among them) send it for "no params": it counts as absent.
    if params is not None and not isinstance(params, dict | list):
        return Refusal(INVALID_REQUEST, f'"params" must be an object or an array, not {_describe(params)}.', answer_id)
    return Message("request" if has_id else "notification", data)


def _response(data: dict[str, Any], msg_id: int | str | None) -> Decoded:
    # A response never gets an answer, whatever is wrong with it; the request it answers must still end.
    if msg_id is None:
        return Refusal(
            INVALID_REQUEST, f"A response with the id {_describe(data.get('id'))} answers nothing.", answer=False
        )
    if data.get("jsonrpc") != VERSION:
        return BrokenResponse(msg_id, 'the answer lacks "jsonrpc": "2.0"')
    if "result" in data and "error" in data:
        return BrokenResponse(msg_id, 'the answer has both "result" and "error"')
    error = data.get("error")
    if "error" in data and not (
        isinstance(error, dict)
        and type(error.get("code")) is int
        and isinstance(error.get("message"), str)
        and set(error) <= {"code", "message", "data"}
    ):
        return BrokenResponse(
            msg_id, f'its "error" is not an object with an integer code and a message: {_describe(error)}'
        )
    return Message("response", data)
