"""Naming a position by symbol and line text (text/symbol_position.py) and applying a file's TextEdits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgate.text.document_sync import Position, offset_at
from toolgate.text.symbol_position import PositionError, locate_symbol
from toolgate.text.text_edits import OverlappingEdits, TextEdit, apply_text_edits

SOURCE = (
    "import { totalArea } from './shapes';\n"
    "\n"
    "export function main(): number {\n"
    "    return totalArea([]);\n"
    "}\n"
    "    return totalArea([]);\n"
)


def test_the_line_is_found_by_its_text_whitespace_aside() -> None:
    position = locate_symbol(SOURCE, "main", "export function main(): number {   ")
    assert (position.line, position.character, position.column) == (2, 16, 16)


def test_a_symbol_inside_a_longer_name_is_not_taken_when_it_occurs_as_a_word() -> None:
    text = "const areaTotal = area(x);\n"
    assert locate_symbol(text, "area", "const areaTotal = area(x);").column == 18


def test_two_lines_that_read_alike_are_listed_and_line_chooses() -> None:
    with pytest.raises(PositionError) as raised:
        locate_symbol(SOURCE, "totalArea", "return totalArea([]);")
    assert "2 lines are reading 'return totalArea([]);'" in str(raised.value)
    assert "4\treturn totalArea([]);" in str(raised.value) and "6\treturn totalArea([]);" in str(raised.value)
    assert locate_symbol(SOURCE, "totalArea", "return totalArea([]);", line=6).line == 5


def test_a_stale_line_number_does_not_matter_when_the_text_names_one_line() -> None:
    assert locate_symbol(SOURCE, "main", "export function main(): number {", line=1).line == 2


def test_several_uses_on_one_line_are_numbered_and_occurrence_chooses() -> None:
    text = "x = foo(foo)\n"
    with pytest.raises(PositionError) as raised:
        locate_symbol(text, "foo", "x = foo(foo)")
    assert "occurs 2 times on line 1" in str(raised.value)
    assert "x = foo(foo)\n    1   2" in str(raised.value)
    assert locate_symbol(text, "foo", "x = foo(foo)", occurrence=2).column == 8
    with pytest.raises(PositionError, match="occurrence 3 does not exist"):
        locate_symbol(text, "foo", "x = foo(foo)", occurrence=3)


def test_a_missing_line_lists_where_the_symbol_does_occur() -> None:
    with pytest.raises(PositionError) as raised:
        locate_symbol(SOURCE, "totalArea", "return totalarea();")
    message = str(raised.value)
    assert message.startswith("No line of the file is reading 'return totalarea();'.")
    assert "1\timport { totalArea } from './shapes';" in message


def test_a_line_without_the_symbol_and_a_line_outside_the_file_are_errors() -> None:
    with pytest.raises(PositionError, match="does not contain 'nope'"):
        locate_symbol(SOURCE, "nope", "export function main(): number {")
    with pytest.raises(PositionError, match="line 99 is outside the file, which has 7 lines"):
        locate_symbol(SOURCE, "main", "export function main(): number {", line=99)
    with pytest.raises(PositionError, match="not empty, on one line"):
        locate_symbol(SOURCE, " main", "export function main(): number {")


def test_columns_count_utf16_units_for_lsp_and_code_points_for_people() -> None:
    text = "const s = '😀é'; const ünïcode = s;\r\nnext\r"
    position = locate_symbol(text, "ünïcode", "const s = '😀é'; const ünïcode = s;")
    assert position.column == 22
    assert position.character == 23  # the emoji is two UTF-16 units
    assert locate_symbol(text, "next", "next").line == 1  # \r\n and \r both end a line


@given(
    before=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\nQ"), max_size=30),
    after=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\nQ"), max_size=30),
)
def test_the_position_points_at_the_symbol_whatever_surrounds_it(before: str, after: str) -> None:
    line = f"{before} Q_sym {after}"
    text = f"first\n{line}\nlast"
    position = locate_symbol(text, "Q_sym", line)
    assert line[position.column : position.column + 5] == "Q_sym"
    assert position.character == len(line[: position.column].encode("utf-16-le")) // 2
    assert position.line == 1


def test_text_edits_all_refer_to_the_original_text() -> None:
    text = "let a = 1;\nuse(a, a);\n"
    edits = [
        TextEdit(Position(1, 7), Position(1, 8), "renamed"),
        TextEdit(Position(0, 4), Position(0, 5), "renamed"),
        TextEdit(Position(1, 4), Position(1, 5), "renamed"),
    ]
    assert apply_text_edits(text, edits) == "let renamed = 1;\nuse(renamed, renamed);\n"
    with pytest.raises(OverlappingEdits):
        apply_text_edits(
            text, [TextEdit(Position(0, 0), Position(0, 5), "x"), TextEdit(Position(0, 3), Position(0, 6), "y")]
        )


@given(
    text=st.lists(st.sampled_from(["a", "é", "😀", "\n", "\r\n", "\r", " "]), max_size=40).map("".join),
    places=st.lists(st.tuples(st.integers(-1, 8), st.integers(-1, 12)), min_size=9, max_size=20),
)
def test_many_edits_land_where_offset_at_puts_each_position(text: str, places: list[tuple[int, int]]) -> None:
    # Past a few edits the lines are found once (the fast path); each insertion must land where `offset_at`,
    # the text-sync rule, puts its position, whatever the line breaks, wide characters or out-of-range values.
    edits = [TextEdit(Position(line, char), Position(line, char), f"<{i}>") for i, (line, char) in enumerate(places)]
    expected = text
    order = sorted(range(len(edits)), key=lambda i: (offset_at(text, edits[i].start), i), reverse=True)
    for i in order:
        at = offset_at(text, edits[i].start)
        expected = expected[:at] + edits[i].new_text + expected[at:]
    assert apply_text_edits(text, edits) == expected
