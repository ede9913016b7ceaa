"""`decoded_as_written` may only claim what decoding the written bytes would really give."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.text.encoding import (
    TextFormat,
    UnencodableError,
    decode,
    decoded_as_written,
    encode_raw,
)

FORMATS = [
    TextFormat(),
    TextFormat("utf-8", bom=True),
    TextFormat("utf-16-le", bom=True),
    TextFormat("utf-16-be", bom=True),
    TextFormat("cp1252"),
    TextFormat("latin-1"),
    TextFormat("utf-8", newline="\r\n"),
]
# Mostly the characters that decide a format: BOMs, line breaks, bytes that are not UTF-8 in an 8-bit file.
TEXTS = st.text(alphabet=st.sampled_from(["a", "é", "\u20ac", "\ufeff", "\r", "\n", "\x00", "\u2603"]), max_size=12)


@settings(max_examples=examples(300), deadline=None)
@given(text=TEXTS, fmt=st.sampled_from(FORMATS))
def test_it_claims_only_what_decoding_gives(text: str, fmt: TextFormat) -> None:
    try:
        data = encode_raw(text, fmt)
    except UnencodableError:
        return
    claimed = decoded_as_written(text, fmt)
    if claimed is not None:
        assert claimed == decode(data)
    # A caller that has looked for "\r" already says what it found, and gets the same answer.
    assert decoded_as_written(text, fmt, carriage_returns="\r" in text) == claimed


@pytest.mark.parametrize(
    ("text", "fmt", "known"),
    [
        ("plain\n", TextFormat(), True),
        ("caf\xe9\n", TextFormat("utf-16-le", bom=True), True),
        ("a\r\nb\r\n", TextFormat(), False),  # which ending wins is for the detection to count
        ("\ufeffstarts with a BOM\n", TextFormat(), False),  # it reads back without it
        ("ascii only\n", TextFormat("cp1252"), False),  # reads back as UTF-8
    ],
)
def test_it_knows_the_common_cases(text: str, fmt: TextFormat, known: bool) -> None:
    assert (decoded_as_written(text, fmt) is not None) is known
