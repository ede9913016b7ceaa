"""The message to the model after a review: which of its hunks were applied and which rejected, which file was
rejected whole, and the person's own edits as a diff; read from the texts alone."""

from __future__ import annotations

from toolgate.text.review_outcome import capped_diff, describe_review, notes_text

ORIGINAL = "a\nb\nc\nd\ne\nf\ng\nh\n"
PROPOSED = "a\nB\nc\nd\ne\nf\nG\nh\nadded\n"


def test_as_proposed_says_nothing() -> None:
    assert describe_review(ORIGINAL, PROPOSED, PROPOSED, "x.py") == ""


def test_a_rejected_hunk_is_named_and_the_applied_ones_too() -> None:
    final = "a\nB\nc\nd\ne\nf\ng\nh\nadded\n"  # the second hunk rejected
    said = describe_review(ORIGINAL, PROPOSED, final, "x.py")
    assert said == (
        "The user reviewed your change to x.py hunk by hunk: applied 2 of 3 hunks: #1 (line 2 of your proposal), "
        "#3 (line 9 of your proposal) and rejected 1 of 3 hunks: #2 (line 7 of your proposal) (those lines stayed "
        "as they were)."
    )


def test_the_persons_own_edits_come_as_a_diff_beside_the_decisions() -> None:
    final = "a\nB, reworded\nc\nd\ne\nf\ng\nh\nadded\n"
    said = describe_review(ORIGINAL, PROPOSED, final, "x.py")
    assert "rejected 1 of 3 hunks: #2" in said and "applied 1 of 3 hunks: #3" in said
    assert "The user also edited it" in said
    assert "-B\n+B, reworded" in said and "-G" not in said  # the rejection is not told twice


def test_a_file_rejected_whole_and_a_deletion_chosen_instead() -> None:
    assert describe_review(ORIGINAL, PROPOSED, ORIGINAL, "x.py") == (
        "The user rejected your whole change to x.py: the file was left as it was."
    )
    assert describe_review(ORIGINAL, PROPOSED, None, "x.py") == "The user chose to delete x.py instead of changing it."


def test_a_new_file_with_every_line_rejected_is_created_empty_and_told_so() -> None:
    # Only leaving a new file out (skipped) keeps it from being created; rejecting all its lines empties it.
    assert describe_review(None, "n\n", "", "new.py") == (
        "The user rejected every line of the new file new.py: it was created empty."
    )


def test_an_edit_without_rejections_is_the_diff_alone() -> None:
    said = describe_review(ORIGINAL, PROPOSED, PROPOSED.replace("added", "added by hand"), "x.py")
    assert said.startswith("The user edited your proposal before accepting it")
    assert "-added\n+added by hand" in said and "hunk by hunk" not in said


def test_a_long_diff_is_capped_and_says_so() -> None:
    old = "".join(f"{n}\n" for n in range(200))
    said = capped_diff(old, old.replace("\n", " changed\n"), "a", "b", limit=10)
    assert len(said.splitlines()) == 11 and said.endswith("more diff lines not shown; Read the file to see all)")


def test_notes_go_with_the_decision() -> None:
    assert notes_text([], "accept") == ""
    assert notes_text([("x.py", 3, " use a constant here ")], "accept") == (
        "The user applied your change, with these notes:\n- x.py, line 3: use a constant here"
    )
    assert notes_text([("x.py", 1, "not this way")], "reject").startswith(
        "The user rejected your change because of these notes:"
    )
