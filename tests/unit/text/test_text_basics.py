from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolgate.text.lines import number_lines, split_lines
from toolgate.text.sizes import format_bytes
from toolgate.text.suggest import closest_names
from toolgate.text.tokens import estimate_tokens


def test_split_lines_counts_like_an_editor() -> None:
    assert split_lines("") == []
    assert split_lines("\n") == [""]
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\r\nb") == ["a", "b"]
    assert split_lines("form\x0cfeed\u2028sep\n") == ["form\x0cfeed\u2028sep"]  # only LF splits


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n")), min_size=1))
def test_split_lines_inverts_joining_with_lf(lines: list[str]) -> None:
    assert split_lines("\n".join(lines) + "\n") == lines


def test_number_lines() -> None:
    assert number_lines(["a", "b"], 9) == "9\ta\n10\tb"


def test_closest_names_prefers_case_then_stem_then_similarity() -> None:
    names = ["Makefile", "main.py", "main.rs", "maine.py", "notes.txt"]
    assert closest_names("makefile", names)[0] == "Makefile"
    assert closest_names("main.ts", names)[:2] == ["main.py", "main.rs"]
    assert closest_names("zzz", names) == []


def test_token_estimate_is_denser_for_json() -> None:
    assert estimate_tokens("x" * 400) == 100
    assert estimate_tokens("x" * 400, "data.JSON") == 200


def test_format_bytes_picks_the_unit_a_person_reads() -> None:
    assert format_bytes(0) == "0 bytes"
    assert format_bytes(1023) == "1023 bytes"
    assert format_bytes(1024) == "1.0 KiB"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(1024 * 1024) == "1.0 MiB"
    assert format_bytes(50 * 1024 * 1024) == "50.0 MiB"
