"""Applying LSP content changes: the same text as pygls's TextDocument for every in-range edit, and the LSP spec
(and the module's documented rules) for out-of-range input, where pygls differs or is wrong."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pygls.workspace import TextDocument

from toolgate.text import document_sync
from toolgate.text.document_sync import Change, Position, Range, apply_change, apply_changes, offset_at

# str.splitlines (which pygls uses) also breaks lines at these; LSP does not. Texts compared with pygls leave them
# out; test_only_lsp_line_breaks_split_lines asserts the spec for them.
NOT_LSP_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"
PIECES = ["a", "b", "é", "中", "😀", "𝄞", "\n", "\r\n", "\r", "\n\n", " ", "\t"]

lsp_characters = st.characters(exclude_characters=NOT_LSP_BREAKS, exclude_categories=["Cs"])
texts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), st.text(lsp_characters, max_size=40))
inserts = st.one_of(st.lists(st.sampled_from(PIECES), max_size=5).map("".join), st.text(lsp_characters, max_size=5))
# Small chunks make every text span many of them, so the chunked line counting (and a \r\n split between two
# chunks) is exercised by short texts too; the real size is among them.
chunks = st.sampled_from([1, 2, 3, 5, 8, document_sync._CHUNK])


@contextmanager
def chunk_size(size: int) -> Iterator[None]:
    with mock.patch.object(document_sync, "_CHUNK", size):
        yield


def lsp_lines(text: str) -> list[str]:
    """The document's lines as LSP counts them, without their breaks (a final break ends in an empty line)."""
    return re.split(r"\r\n|\r|\n", text)


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def boundaries(line: str) -> list[int]:
    """Every UTF-16 `character` of the line that is not inside a surrogate pair."""
    found = [0]
    for char in line:
        found.append(found[-1] + units(char))
    return found


@st.composite
def in_range_changes(draw: st.DrawFn, text: str) -> Change:
    if draw(st.integers(0, 9)) == 0:
        return Change(draw(inserts))  # a whole-document change
    lines = lsp_lines(text)
    picked = []
    for _ in range(2):
        line = draw(st.integers(0, len(lines) - 1))
        picked.append(Position(line, draw(st.sampled_from(boundaries(lines[line])))))
    start, end = sorted(picked, key=lambda p: (p.line, p.character))
    return Change(draw(inserts), Range(start, end))


def with_pygls(text: str, changes: list[Change]) -> str:
    document = TextDocument("file:///doc.txt", text)
    for change in changes:
        if change.range is None:
            document.apply_change(lsp.TextDocumentContentChangeWholeDocument(text=change.text))
            continue
        start, end = change.range.start, change.range.end
        edit = lsp.Range(lsp.Position(start.line, start.character), lsp.Position(end.line, end.character))
        document.apply_change(lsp.TextDocumentContentChangePartial(range=edit, text=change.text))
    return document.source


@settings(max_examples=400)
@given(st.data(), texts, chunks)
def test_in_range_edits_give_what_pygls_gives(data: st.DataObject, text: str, chunk: int) -> None:
    changes: list[Change] = []
    current = text
    for _ in range(data.draw(st.integers(1, 6))):
        change = data.draw(in_range_changes(current))
        changes.append(change)
        with chunk_size(chunk):
            current = apply_change(current, change)
    assert current == with_pygls(text, changes)
    with chunk_size(chunk):
        assert apply_changes(text, changes) == current


def test_edits_deep_in_a_big_buffer_with_every_line_break_give_what_pygls_gives() -> None:
    breaks = ("\r\n", "\n", "\r")
    text = "".join(f"line {n} 😀" + breaks[n % 3] for n in range(20_000))
    changes = [
        Change("X", Range(Position(15_000, 5), Position(15_000, 6))),
        Change("", Range(Position(9_999, 3), Position(12_345, 9))),  # across many chunks
        Change("new\r\nlines\r", Range(Position(7_000, 8), Position(7_000, 8))),  # inside the emoji: after it
        Change("tail", Range(Position(17_654, 0), Position(17_654, 0))),  # the last (empty) line
    ]
    assert apply_changes(text, changes) == with_pygls(text, changes)


# --- out-of-range input: a reference of the documented rules, written the plain way ---------------------------


def reference_offset(text: str, line: int, character: int) -> int:
    line, character = max(line, 0), max(character, 0)
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    if line >= len(starts):
        return len(text)  # a line past the last: the end of the document
    offset = starts[line]
    content = lsp_lines(text)[line]
    for char in content:
        if character <= 0:
            break
        character -= units(char)  # a position inside a surrogate pair ends up after it
        offset += 1
    return offset  # a character past the line's end stops at the end of its content, before the break


any_text = st.one_of(texts, st.text(max_size=30))  # also \u2028, \x85, … (not line breaks)
coordinates = st.one_of(st.integers(-3, 12), st.integers())


@settings(max_examples=400)
@given(any_text, coordinates, coordinates, coordinates, coordinates, st.text(max_size=5), chunks)
def test_any_position_is_resolved_as_documented_and_never_raises(
    text: str, sl: int, sc: int, el: int, ec: int, new: str, chunk: int
) -> None:
    with chunk_size(chunk):
        result = apply_change(text, Change(new, Range(Position(sl, sc), Position(el, ec))))
        assert offset_at(text, Position(sl, sc)) == reference_offset(text, sl, sc)
    begin, stop = sorted((reference_offset(text, sl, sc), reference_offset(text, el, ec)))
    assert result == text[:begin] + new + text[stop:]
    result.encode("utf-8")  # valid: no astral character was split into lone surrogates


def test_a_character_past_the_end_of_a_line_is_its_end() -> None:
    # LSP: "If the character value is greater than the line length it defaults back to the line length."
    # pygls clamps to one before the end on a last line without a line break: it would give "abXc" here.
    assert apply_change("ab\r\nabc", Change("X", Range(Position(1, 99), Position(1, 99)))) == "ab\r\nabcX"
    assert apply_change("ab\r\nabc", Change("X", Range(Position(0, 99), Position(0, 99)))) == "abX\r\nabc"
    assert apply_change("ab\rcd", Change("", Range(Position(0, 1), Position(0, 7)))) == "a\rcd"
    # pygls counts the line break as part of the line: one past the end lands after the break ("abc\nXd").
    assert apply_change("abc\nd", Change("X", Range(Position(0, 4), Position(0, 4)))) == "abcX\nd"


def test_a_line_past_the_last_is_the_end_of_the_document() -> None:
    assert apply_change("ab\ncd", Change("X", Range(Position(7, 3), Position(9, 0)))) == "ab\ncdX"
    assert apply_change("ab\ncd", Change("", Range(Position(0, 1), Position(9, 0)))) == "a"
    assert apply_change("", Change("X", Range(Position(3, 3), Position(4, 4)))) == "X"


def test_a_position_inside_a_surrogate_pair_is_after_it() -> None:
    assert apply_change("a😀b", Change("X", Range(Position(0, 2), Position(0, 2)))) == "a😀Xb"
    assert apply_change("a😀b", Change("", Range(Position(0, 1), Position(0, 2)))) == "ab"
    assert apply_change("😀😀", Change("X", Range(Position(0, 3), Position(0, 3)))) == "😀😀X"


def test_a_range_ending_before_it_starts_is_the_range_between() -> None:
    assert apply_change("ab\ncd", Change("X", Range(Position(1, 1), Position(0, 1)))) == "aXd"
    assert apply_change("abc", Change("", Range(Position(-4, -1), Position(0, 1)))) == "bc"


def test_a_crlf_is_one_line_break() -> None:
    # Line 1 starts after the whole \r\n: there is no position between its halves.
    assert apply_change("a\r\nb", Change("X", Range(Position(1, 0), Position(1, 0)))) == "a\r\nXb"
    assert apply_change("a\r\nb", Change("", Range(Position(0, 1), Position(1, 0)))) == "ab"
    # Edits can join a \r and a \n into one break; later positions count lines the new way.
    joined = apply_change("a\rx\nb", Change("", Range(Position(1, 0), Position(1, 1))))
    assert joined == "a\r\nb"
    assert apply_change(joined, Change("Y", Range(Position(1, 0), Position(1, 0)))) == "a\r\nYb"


@pytest.mark.parametrize("separator", list(NOT_LSP_BREAKS))
def test_only_lsp_line_breaks_split_lines(separator: str) -> None:
    # pygls (str.splitlines) would take line 1 to start after the separator.
    text = f"a{separator}b\nc"
    assert apply_change(text, Change("X", Range(Position(1, 0), Position(1, 0)))) == f"a{separator}b\nXc"
    assert apply_change(text, Change("X", Range(Position(0, 2), Position(0, 2)))) == f"a{separator}Xb\nc"


def test_a_whole_document_change_replaces_everything() -> None:
    assert apply_changes("old", [Change("new"), Change("!", Range(Position(0, 3), Position(0, 3)))]) == "new!"
