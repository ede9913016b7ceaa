"""Curly-quote tolerance in text/: matching, mapping back, re-styling, and properties of the replacement.

Edit's use of it, through the runtime, is tested in tests/unit/tools/test_edit_quotes.py."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.text.quotes import fold_quotes, restyle_quotes
from toolgate.text.replace import find_matches, replace_matches


def test_restyle_uses_the_characters_around_the_match() -> None:
    # The new text starts with a quote right after a letter in the file: that quote closes.
    assert restyle_quotes("'s", "\u2019s", "'s and 't", before="t") == "\u2019s and \u2018t"
    assert restyle_quotes("'x", "\u2018x", "'y", before=" ") == "\u2018y"


# --- properties --------------------------------------------------------------------------------------------

quote_text = st.text(alphabet=st.sampled_from("ab \n'\"\u2018\u2019\u201c\u201d.("), max_size=60)


@given(
    prefix=st.text(max_size=40),
    middle=st.text(min_size=1, max_size=20),
    suffix=st.text(max_size=40),
    new=st.text(min_size=1, max_size=20),
)
def test_an_edit_changes_exactly_the_matched_span(prefix: str, middle: str, suffix: str, new: str) -> None:
    text = prefix + middle + suffix
    matches = find_matches(text, middle)
    if len(matches) != 1 or matches.quotes_folded:
        return  # ambiguous: Edit refuses it (tested in tools/test_edit.py)
    [(start, end)] = matches.spans
    assert replace_matches(text, matches, middle, new) == text[:start] + new + text[end:]


@given(
    text=st.text(alphabet="ab\n", max_size=60),
    old=st.text(alphabet="ab\n", min_size=1, max_size=4),
    new=st.text(alphabet="abc\n", max_size=4),
)
def test_every_exact_match_is_replaced_and_nothing_else(text: str, old: str, new: str) -> None:
    # replace_all: each span found is spliced, left to right; a whole line deleted takes its newline along.
    matches = find_matches(text, old)
    expected, pos = [], 0
    for start, end in matches.spans:
        line_deleted = not new and not old.endswith("\n") and text[end : end + 1] == "\n"
        line_deleted = line_deleted and (start == 0 or text[start - 1] == "\n")
        expected += [text[pos:start], new]
        pos = end + 1 if line_deleted else end
    assert replace_matches(text, matches, old, new) == "".join(expected) + text[pos:]


@settings(max_examples=examples(300))
@given(text=quote_text, data=st.data(), new=quote_text)
def test_quote_handling_never_changes_text_outside_the_match(text: str, data: st.DataObject, new: str) -> None:
    if not text or not new:
        return
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = fold_quotes(text[start:end])  # what a model types: straight quotes only
    matches = find_matches(text, old)
    if len(matches) != 1:
        return
    [(s, e)] = matches.spans
    result = replace_matches(text, matches, old, new)
    tail = len(text) - e
    assert result[:s] == text[:s]
    assert result[len(result) - tail :] == text[e:] if tail else True
    replaced = result[s : len(result) - tail]
    # Only quote characters may differ from what the model sent, and only as a re-styling.
    assert fold_quotes(replaced) == fold_quotes(new)


# Small alphabet and repeated pieces, so anchors recur, overlap and sit next to quotes.
anchored_text = st.text(alphabet=st.sampled_from("ab ab'\"\u2018\u2019\u201c\u201d"), max_size=80)


def _fold_then_find(text: str, old: str) -> list[tuple[int, int]]:
    # The definition the windowed search must agree with: fold everything, then find left to right.
    folded, needle = fold_quotes(text), fold_quotes(old)
    spans, start = [], folded.find(needle)
    while start != -1:
        spans.append((start, start + len(needle)))
        start = folded.find(needle, start + len(needle))
    return spans


@settings(max_examples=examples(500))
@given(text=anchored_text, old=st.text(alphabet=st.sampled_from("ab '\"\u2018\u201d"), min_size=1, max_size=12))
def test_the_windowed_quote_search_finds_what_folding_the_whole_text_finds(text: str, old: str) -> None:
    matches = find_matches(text, old)
    if not matches.quotes_folded:
        return  # an exact match, or no curly quote anywhere: the folded search is not used
    assert matches.spans == _fold_then_find(text, old)


def test_the_windowed_quote_search_keeps_matches_apart_when_they_would_overlap() -> None:
    # Folded, the text holds the old string at 0 and at 5, overlapping: as with str.find, only 0 counts.
    text = "abab\u201cabab\u201cabab"
    assert find_matches(text, 'abab"abab').spans == _fold_then_find(text, 'abab"abab') == [(0, 9)]
    assert find_matches(text + "\u201d", 'abab"').spans == [(0, 5), (5, 10), (10, 15)]
