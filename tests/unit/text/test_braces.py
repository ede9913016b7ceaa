"""Brace expansion as bash does it, for path checks (text/braces.py)."""

from __future__ import annotations

import pytest

from toolgate.text.braces import expand_braces


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("plain.txt", ["plain.txt"]),
        ("src/{a,../../etc/passwd}", ["src/a", "src/../../etc/passwd"]),
        ("{a,b}{c,d}", ["ac", "ad", "bc", "bd"]),
        ("{a,{b,c}}.py", ["a.py", "b.py", "c.py"]),
        ("log{1..3}", ["log1", "log2", "log3"]),
        ("{c..a}", ["c", "b", "a"]),
        ("{0..10..5}", ["0", "5", "10"]),
        ("x{}", ["x{}"]),
        ("{single}", ["{single}"]),
        ("${HOME}/x", ["${HOME}/x"]),
    ],
)
def test_expansion(word: str, expected: list[str]) -> None:
    assert expand_braces(word) == expected


@pytest.mark.parametrize("word", ["f{1..100000}", "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"])
def test_too_many_words_is_unknown(word: str) -> None:
    assert expand_braces(word) is None
