"""`toolgate serve` over raw stdio survives any input: it never exits, never stops answering pings, writes only
framed JSON, and answers each malformed message with the code the JSON-RPC 2.0 spec gives.

The table below pins the answer to each kind of bad input; the Hypothesis test throws mixtures of them, cut into
arbitrary writes, at one server. `make test` replays a fixed set of examples; `make fuzz` draws many more.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.integration.raw_wire import PING, RawSidecar, frame, message
from tests.properties import examples

from toolgate.sidecar.envelope import MAX_DEPTH
from toolgate.sidecar.transport import MAX_MESSAGE_BYTES

PARSE, INVALID, NOT_FOUND, PARAMS = -32700, -32600, -32601, -32602
DEEP = MAX_DEPTH + 1
PADDING = 256 * 1024
ANSWER_CODES = {PARSE, INVALID, NOT_FOUND, PARAMS, -32002, -32603, -32800}


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def body(text: str) -> bytes:
    return frame(text.encode())


def raw(**members: str) -> bytes:
    """A framed object whose members are given as JSON text, so they can be what `json.dumps` never writes."""
    return body("{" + ",".join(f'"{name}":{text}' for name, text in members.items()) + "}")


V2, PING_TEXT = '"2.0"', '"toolgate/ping"'


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawSidecar]:
    root = tmp_path_factory.mktemp("wire")
    (root / "ws").mkdir()
    server = RawSidecar(root / "storage", root / "ws")
    try:
        yield server
    finally:
        server.close()


def answers_then_ping(sidecar: RawSidecar, data: bytes) -> list[dict[str, Any]]:
    """Send `data`, then a ping; everything the server wrote before the ping's answer."""
    sidecar.send(data)
    others: list[dict[str, Any]] = []
    sidecar.ping(others)
    assert sidecar.violations == [], sidecar.state()
    return others


def error_of(answer: dict[str, Any]) -> tuple[int, Any]:
    assert set(answer) == {"jsonrpc", "id", "error"}, answer
    error = answer["error"]
    assert "data" not in error or "traceback" not in json.dumps(error["data"]), error
    assert ".py" not in error["message"] and "Traceback" not in error["message"], error
    return error["code"], answer["id"]


# (what, input, the (code, id) of each answer the server must write before the next ping's)
CASES: list[tuple[str, bytes, list[tuple[int, Any]]]] = [
    ("not JSON", body("{bogus}"), [(PARSE, None)]),
    ("invalid UTF-8", frame(b'{"jsonrpc":"2.0","id":1,"method":"\xff\xfe"}'), [(PARSE, None)]),
    ("NaN id", body('{"jsonrpc":"2.0","id":NaN,"method":"toolgate/ping"}'), [(PARSE, None)]),
    ("Infinity id", body('{"jsonrpc":"2.0","id":-Infinity,"method":"toolgate/ping"}'), [(PARSE, None)]),
    ("1e400 id", body('{"jsonrpc":"2.0","id":1e400,"method":"toolgate/ping"}'), [(INVALID, None)]),
    ("fractional id", body('{"jsonrpc":"2.0","id":1.5,"method":"toolgate/ping"}'), [(INVALID, None)]),
    ("huge int id", raw(jsonrpc=V2, id=str(2**64), method=PING_TEXT), [(INVALID, None)]),
    ("4400-digit id", raw(jsonrpc=V2, id="9" * 4400, method=PING_TEXT), [(PARSE, None)]),
    ("id true", body('{"jsonrpc":"2.0","id":true,"method":"toolgate/ping"}'), [(INVALID, None)]),
    ("id null", body('{"jsonrpc":"2.0","id":null,"method":"toolgate/ping"}'), [(INVALID, None)]),
    ("object id", body('{"jsonrpc":"2.0","id":{"a":1},"method":"toolgate/ping"}'), [(INVALID, None)]),
    ("array id", body('{"jsonrpc":"2.0","id":[1],"method":"toolgate/ping"}'), [(INVALID, None)]),
    ("method not a string", body('{"jsonrpc":"2.0","id":"m","method":5}'), [(INVALID, "m")]),
    ("method an object", body('{"jsonrpc":"2.0","id":"m2","method":{"a":[]}}'), [(INVALID, "m2")]),
    ("no method", body('{"jsonrpc":"2.0","id":"m3"}'), [(INVALID, "m3")]),
    ("unknown method", body('{"jsonrpc":"2.0","id":"u","method":"toolgate/nope"}'), [(NOT_FOUND, "u")]),
    ("no jsonrpc", body('{"id":"j","method":"toolgate/ping"}'), [(INVALID, "j")]),
    ("jsonrpc 1.0", body('{"jsonrpc":"1.0","id":"j2","method":"toolgate/ping"}'), [(INVALID, "j2")]),
    ("params a string", body('{"jsonrpc":"2.0","id":"p","method":"toolgate/ping","params":"x"}'), [(INVALID, "p")]),
    ("bad params", body('{"jsonrpc":"2.0","id":"p2","method":"toolgate/session/load","params":{}}'), [(PARAMS, "p2")]),
    (
        "an LSP method not served",
        body('{"jsonrpc":"2.0","id":"h","method":"textDocument/hover","params":{"x":1}}'),
        [(NOT_FOUND, "h")],
    ),
    ("a number", body("42"), [(INVALID, None)]),
    ("a string", body('"hello"'), [(INVALID, None)]),
    ("null", body("null"), [(INVALID, None)]),
    ("empty batch", body("[]"), [(INVALID, None)]),
    ("batch", body('[{"jsonrpc":"2.0","id":"b","method":"toolgate/ping"}]'), [(INVALID, None)]),
    ("notification", body('{"jsonrpc":"2.0","method":"toolgate/ping"}'), []),
    ("unknown notification", body('{"jsonrpc":"2.0","method":"$/whatever","params":{}}'), []),
    ("answer to nothing", body('{"jsonrpc":"2.0","id":"nobody","result":{}}'), []),
    ("malformed answer to nothing", body('{"jsonrpc":"2.0","id":"nobody","error":"boom"}'), []),
    ("deep top level", body(nested(1000)), [(INVALID, None)]),
    ("deep top level, just over", body(nested(DEEP)), [(INVALID, None)]),
    (
        "deep params",
        raw(jsonrpc=V2, id='"d"', method=PING_TEXT, params=nested(DEEP)),
        [(PARAMS, "d")],
    ),
    (
        "deep params, 100k",
        raw(jsonrpc=V2, id='"d2"', method=PING_TEXT, params=nested(10**5)),
        [(INVALID, None)],
    ),
    ("deep id", raw(jsonrpc=V2, id=nested(2000), method=PING_TEXT), [(INVALID, None)]),
    ("deep method", raw(jsonrpc=V2, id='"dm"', method=nested(DEEP)), [(INVALID, "dm")]),
    (
        "deep tool input",
        raw(
            jsonrpc=V2,
            id='"ti"',
            method='"toolgate/tools/run"',
            params='{"sessionId":"abc","calls":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":%s}}]}'.replace(
                "%s", nested(DEEP)
            ),
        ),
        [(PARAMS, "ti")],
    ),
    ("deep notification", raw(jsonrpc=V2, method=PING_TEXT, params=nested(DEEP)), []),
    (
        "just within the depth limit",
        raw(jsonrpc=V2, id='"ok"', method='"toolgate/nope"', params=nested(MAX_DEPTH - 2)),
        [(NOT_FOUND, "ok")],
    ),
    # framing
    ("non-numeric length", b"Content-Length: abc\r\n\r\n{}", [(PARSE, None)]),
    ("negative length", b"Content-Length: -5\r\n\r\n{}", [(PARSE, None)]),
    ("huge length", b"Content-Length: %d\r\n\r\n{}" % (MAX_MESSAGE_BYTES + 1), [(PARSE, None)]),
    ("absurd length", b"Content-Length: 99999999999999999999999\r\n\r\n{}", [(PARSE, None)]),
    ("two header blocks glued", b"Content-Length: 9\r\nContent-Length: 2\r\n\r\n{}", [(PARSE, None), (INVALID, None)]),
    ("header block without length", b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}", []),
    (
        "length shorter than the body",
        b"Content-Length: 5\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "id": "s"}).encode(),
        [(PARSE, None)],
    ),
    (
        "garbage before a message",
        b"\x00\xffgarbage" + message(jsonrpc="2.0", id="g", method="toolgate/nope"),
        [(NOT_FOUND, "g")],
    ),
    ("header line over the limit", b"Content-Length: 1\r\nX: " + b"y" * 70_000 + b"\r\n\r\n", [(PARSE, None)]),
]


@pytest.mark.parametrize(("what", "data", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_malformed_input_gets_the_answer_the_spec_gives(
    sidecar: RawSidecar, what: str, data: bytes, expected: list[tuple[int, Any]]
) -> None:
    answers = answers_then_ping(sidecar, data)
    assert [error_of(a) for a in answers] == expected, (what, answers)


def test_a_frame_split_across_many_writes_is_read(sidecar: RawSidecar) -> None:
    data = message(jsonrpc="2.0", id="split", method="toolgate/nope")
    for i in range(len(data)):
        sidecar.send(data[i : i + 1])
    assert error_of(sidecar.answer_to("split")) == (NOT_FOUND, "split")


def test_a_duplicate_id_of_a_running_request_is_refused(sidecar: RawSidecar) -> None:
    # Two pings with one id in one write: the first is still in flight when the second is read.
    ping = message(jsonrpc="2.0", id="dup", method=PING)
    answers = answers_then_ping(sidecar, ping + ping)
    assert len(answers) == 2, answers
    refused = [a for a in answers if "error" in a]
    assert [error_of(a) for a in refused] == [(INVALID, "dup")], answers  # answered at once, before the first
    assert [a for a in answers if "result" in a] == [{"jsonrpc": "2.0", "id": "dup", "result": {}}]
    # Once answered, the id is free again.
    assert answers_then_ping(sidecar, ping) == [{"jsonrpc": "2.0", "id": "dup", "result": {}}]


# --- fuzzing -------------------------------------------------------------------------------------------------
def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=8,
    )


ODD_IDS = [
    "1e400",
    "NaN",
    "Infinity",
    "true",
    "false",
    "null",
    "1.5",
    str(2**70),
    "{}",
    "[1]",
    nested(DEEP),
    '"s"',
    "7",
]


@st.composite
def bad_messages(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["case", "odd id", "random body", "random object", "garbage", "truncated"]))
    if kind == "case":
        return draw(st.sampled_from(CASES))[1]
    if kind == "odd id":
        method = draw(st.sampled_from(['"toolgate/ping"', '"toolgate/nope"', "5", nested(DEEP, '"x"')]))
        return raw(jsonrpc=V2, id=draw(st.sampled_from(ODD_IDS)), method=method)
    if kind == "random body":
        return frame(draw(st.binary(max_size=64)))
    if kind == "random object":
        members = draw(
            st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]), _json_values())
        )
        return frame(json.dumps(members).encode())
    if kind == "garbage":
        return draw(st.binary(max_size=64))
    whole = draw(st.sampled_from(CASES))[1]
    return whole[: draw(st.integers(0, len(whole)))]


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pieces=st.lists(bad_messages(), min_size=1, max_size=6), cuts=st.lists(st.integers(1, 40), max_size=8))
def test_no_mixture_of_bad_input_kills_or_deafens_the_server(
    sidecar: RawSidecar, pieces: list[bytes], cuts: list[int]
) -> None:
    # A truncated frame waits for the rest of its body (the largest case's is under 256 KiB) and swallows what
    # follows; padding ends it, and the server skips the rest of the padding up to the next header.
    data = b"".join(pieces) + b"\r\n\r\n" + b" " * PADDING + b"\r\n"
    offset = 0
    for cut in cuts:  # interleaved partial frames: the input arrives in arbitrary pieces
        sidecar.send(data[offset : offset + cut])
        offset += cut
    sidecar.send(data[offset:])
    answers: list[dict[str, Any]] = []
    sidecar.ping(answers)
    assert sidecar.violations == [], sidecar.state()
    assert sidecar.process.poll() is None
    for answer in answers:
        if "method" in answer:
            continue  # a notification of the server's own
        if "error" in answer:
            code, _ = error_of(answer)
            assert code in ANSWER_CODES, answer
