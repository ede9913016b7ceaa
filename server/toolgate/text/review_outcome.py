"""What the model is told after a person reviewed its proposed change to one file: which of its hunks were applied,
which were rejected (the lines stayed as they were), and any other edit the person made, as a diff.

The person's decisions are read from the texts alone (the file before, the model's proposal, the version accepted),
so a hunk rejected with a CodeLens, with the diff editor's own "revert block" arrow, or by typing the old lines
back, is told the same way.
"""

from __future__ import annotations

from toolgate.text.diff import unified_diff
from toolgate.text.hunks import Hunk, HunkConflict, apply_hunk, hunks_between, reverse_hunk

MAX_DIFF_LINES = 60  # of the person's own edits; more is announced, and the file can be Read


def capped_diff(old: str, new: str, old_name: str, new_name: str, limit: int = MAX_DIFF_LINES) -> str:
    """A unified diff of at most `limit` lines, saying how many more there were."""
    lines = unified_diff(old, new, old_name, new_name).splitlines()
    if len(lines) > limit:
        hidden = len(lines) - limit
        lines = [*lines[:limit], f"... ({hidden} more diff lines not shown; Read the file to see all)"]
    return "\n".join(lines)


def describe_review(original: str | None, proposed: str | None, final: str | None, shown: str) -> str:
    """The note for a file whose accepted version (`final`) differs from the proposal; "" when it does not."""
    if final == proposed:
        return ""
    if final is None:
        return f"The user chose to delete {shown} instead of changing it."
    if original is None and final == "":
        return f"The user rejected every line of the new file {shown}: it was created empty."
    if final == (original or "") and proposed is not None:
        return f"The user rejected your whole change to {shown}: the file was left as it was."
    hunks = hunks_between(original or "", proposed or "")
    applied, rejected, expected = [], [], proposed or ""
    for number, hunk in enumerate(hunks, start=1):
        if _holds(final, hunk, reverse=True):
            applied.append(number)
        elif _holds(final, hunk, reverse=False):
            rejected.append(number)
    for hunk in reversed([hunks[n - 1] for n in rejected]):
        expected = reverse_hunk(expected, hunk)  # the proposal with the rejected hunks taken out
    parts: list[str] = []
    if rejected:
        parts.append(
            f"The user reviewed your change to {shown} hunk by hunk: applied {_list(applied, hunks)} "
            f"and rejected {_list(rejected, hunks)} (those lines stayed as they were)."
        )
    edits = capped_diff(expected, final, f"{shown} (your proposal)", f"{shown} (as accepted)")
    if edits:
        parts.append(
            "The user also edited it, so the file differs from that:"
            if parts
            else "The user edited your proposal before accepting it, so the file differs from what you proposed:"
        )
        parts.append(f"```diff\n{edits}\n```")
    return "\n".join(parts)


def describe_skipped(original: str | None, proposed: str | None, shown: str) -> str:
    """The note for a file the person left as it is while accepting the rest of a multi-file change (the result's
    list of changed files says which were applied)."""
    if original is None:
        return f"The user chose not to create {shown}: it does not exist."
    if proposed is None:
        return f"The user rejected the deletion of {shown}: it was kept, unchanged."
    return f"The user rejected your whole change to {shown}: the file was left as it was."


def _holds(final: str, hunk: Hunk, *, reverse: bool) -> bool:
    """Whether `final` has the hunk's new lines (`reverse`: it was applied) or its old ones (it was rejected)."""
    try:
        (reverse_hunk if reverse else apply_hunk)(final, hunk)
    except HunkConflict:
        return False
    return True


def _list(numbers: list[int], hunks: list[Hunk]) -> str:
    if not numbers:
        return "none"
    named = ", ".join(f"#{n} (line {hunks[n - 1].new_start + 1} of your proposal)" for n in numbers)
    return f"{len(numbers)} of {len(hunks)} hunks: {named}"


def notes_text(notes: list[tuple[str, int, str]], decision: str) -> str:
    """The person's comments on lines of the proposal (file shown, 1-based line, text), with the decision they go
    with; "" when there are none."""
    if not notes:
        return ""
    head = (
        "The user applied your change, with these notes:"
        if decision == "accept"
        else "The user rejected your change because of these notes:"
    )
    return "\n".join([head, *(f"- {shown}, line {line}: {text.strip()}" for shown, line, text in notes)])
