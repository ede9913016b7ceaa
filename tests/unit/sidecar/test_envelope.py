"""The envelope check: depth measured on the text agrees with the parsed value, and ids are exact or refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.sidecar import envelope
from toolgate.sidecar.envelope import (
    MAX_DEPTH,
    Message,
    Refusal,
    decode,
    field_path,
    is_exact_id,
    nesting_depth,
    too_deep,
)

TRICKY_TEXT = st.sampled_from(['a\\"[', "\\\\", "{}]", 'x\\\\"y', "[", '"', "\\", "é{"]) | st.text(max_size=5)
VALUES = st.recursive(
    st.none() | st.integers() | TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=30,
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


@settings(max_examples=examples(200))
@given(value=VALUES, ascii_only=st.booleans())
def test_depth_on_the_text_is_the_depth_of_the_value(value: Any, ascii_only: bool) -> None:
    assert nesting_depth(json.dumps(value, ensure_ascii=ascii_only).encode()) == depth(value)


@given(value=VALUES)
def test_too_deep_finds_a_path_exactly_when_the_value_is_too_deep(value: Any) -> None:
    for limit in range(1, 6):
        path = too_deep(value, limit)
        assert (path is not None) == (depth(value) > limit)
        if path is not None:
            inner = value
            for step in path:
                inner = inner[step]
            assert depth(inner) >= 1


def test_ids_are_exact_strings_or_integers() -> None:
    assert all(is_exact_id(v) for v in ("a", "", 0, -(2**53 - 1), 2**53 - 1))
    assert not any(is_exact_id(v) for v in (True, False, None, 1.0, float("inf"), 2**53, [], {}))


def test_a_deep_value_is_named_by_its_path() -> None:
    assert field_path(("calls", 0, "input", "a")) == "calls[0].input.a"
    text = '{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":[%s]}}' % ("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    refusal = decode(text.encode())
    assert isinstance(refusal, Refusal) and refusal.id == 3 and refusal.code == -32602
    assert refusal.message.startswith("`a[0][0][0][0][0]…` nests")


def test_depth_is_judged_the_same_for_few_and_for_many_containers() -> None:
    # Few containers are walked after parsing; many (more than the walk's budget) are measured on the text first.
    deep = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)  # under the message and its params: one level too many
    shallow = "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2)
    for crowd in ("", ",".join(["{}"] * 5000) + ","):
        for nested, refused in ((deep, True), (shallow, False)):
            text = '{"jsonrpc":"2.0","id":4,"method":"m","params":[' + crowd + nested + "]}"
            decoded = decode(text.encode())
            assert isinstance(decoded, Refusal) == refused, (len(crowd), refused)
            if refused:
                assert isinstance(decoded, Refusal) and decoded.id == 4 and decoded.code == -32602


@given(levels=st.integers(MAX_DEPTH - 4, MAX_DEPTH + 1), inner=VALUES, use_dicts=st.booleans(), key=TRICKY_TEXT)
def test_decode_refuses_a_message_exactly_when_it_is_too_deep(
    levels: int, inner: Any, use_dicts: bool, key: str
) -> None:
    value = inner
    for _ in range(levels):
        value = {key: value} if use_dicts else [value]
    message = {"jsonrpc": "2.0", "id": 5, "method": "m", "params": value}
    decoded = decode(json.dumps(message).encode())
    assert isinstance(decoded, Refusal) == (depth(message) > MAX_DEPTH), depth(message)


def test_a_small_message_with_few_brackets_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    def walk(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(envelope, "_walk", walk)
    call = {"id": "t1", "name": "Read", "input": {"file_path": "a [b] {c}.txt", "offset": 2}}
    body = json.dumps({"jsonrpc": "2.0", "id": 6, "method": "toolgate/tools/run", "params": {"calls": [call]}})
    assert isinstance(decode(body.encode()), Message)
    with pytest.raises(AssertionError, match="walked"):  # more brackets than the limit: walked
        decode(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "m", "params": [[]] * MAX_DEPTH}).encode())


def test_a_byte_order_mark_is_refused_as_json_loads_words_it() -> None:
    refusal = decode('\ufeff{"jsonrpc":"2.0","id":1,"method":"m"}'.encode())
    assert isinstance(refusal, Refusal) and refusal.code == -32700 and "Unexpected UTF-8 BOM" in refusal.message


@given(st.binary(max_size=200))
def test_decode_never_raises(data: bytes) -> None:
    decode(data)
