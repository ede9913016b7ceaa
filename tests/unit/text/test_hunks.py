"""One hunk of a change reversed (or kept) alone: the other hunks and the person's lines stay, and lines the
person changed since are a conflict, never a guess."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgate.text.hunks import HunkConflict, apply_hunk, count_changes, hunks_between, reverse_hunk

OLD = "a\nb\nc\nd\ne\nf\ng\nh\n"
NEW = "a\nB\nc\nd\ne\nf\nG\nh\nadded\n"


def test_each_run_of_changed_lines_is_its_own_hunk() -> None:
    hunks = hunks_between(OLD, NEW)
    assert [(h.old, h.new) for h in hunks] == [(("b\n",), ("B\n",)), (("g\n",), ("G\n",)), ((), ("added\n",))]
    assert count_changes(hunks) == (3, 2)


def test_reversing_one_hunk_keeps_the_others() -> None:
    first, second, third = hunks_between(OLD, NEW)
    assert reverse_hunk(NEW, second) == "a\nB\nc\nd\ne\nf\ng\nh\nadded\n"
    assert reverse_hunk(NEW, third) == "a\nB\nc\nd\ne\nf\nG\nh\n"
    assert reverse_hunk(reverse_hunk(NEW, first), second) == "a\nb\nc\nd\ne\nf\ng\nh\nadded\n"


def test_a_hunk_is_found_again_after_the_person_added_lines_above_it() -> None:
    _first, second, _third = hunks_between(OLD, NEW)
    moved = "person's header\n" + NEW
    assert reverse_hunk(moved, second) == "person's header\na\nB\nc\nd\ne\nf\ng\nh\nadded\n"


def test_lines_the_person_changed_since_are_a_conflict() -> None:
    first, _second, _third = hunks_between(OLD, NEW)
    with pytest.raises(HunkConflict, match="line 2 were edited since"):
        reverse_hunk("a\nB, and the person's words\nc\nd\ne\nf\nG\nh\nadded\n", first)


def test_a_hunk_that_now_appears_twice_is_not_guessed() -> None:
    old, new = "x\nkeep\ny\n", "x\nnew\ny\n"
    (hunk,) = hunks_between(old, new)
    with pytest.raises(HunkConflict, match="2 times"):
        reverse_hunk("top\n" + new + new, hunk)


def test_line_endings_and_a_missing_final_newline_survive() -> None:
    old, new = "one\r\ntwo\r\nthree", "one\r\nTWO\r\nthree"
    (hunk,) = hunks_between(old, new)
    assert reverse_hunk(new, hunk) == old
    assert apply_hunk(old, hunk) == new


def test_apply_makes_the_change_on_the_old_side() -> None:
    _first, second, _third = hunks_between(OLD, NEW)
    assert apply_hunk(OLD, second) == "a\nb\nc\nd\ne\nf\nG\nh\n"


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "x\n", ""]), max_size=12).map("".join)


@given(lines, lines)
def test_reversing_every_hunk_newest_first_gives_the_old_text(old: str, new: str) -> None:
    text = new
    for hunk in reversed(hunks_between(old, new)):
        text = reverse_hunk(text, hunk)
    assert text == old
