"""The changes bar: only the agent's changes of the last turns, per file and per hunk, as they are in the files
now; Keep drops a change without touching the file; Undo of a hunk, a file or all of them reverses the agent's
lines only, stops at lines the person changed since, and can be taken back."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolgate.checkpoints.changes import ChangesReview, FileEntry, keep, list_changes, undo_files, undo_hunk
from toolgate.checkpoints.git import ShadowGit
from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.session import SessionCheckpoints
from toolgate.text.hunks import HunkConflict


async def _agent_call(checkpoints: SessionCheckpoints, use_id: str, change: dict[Path, str]) -> None:
    assert await checkpoints.before_change(use_id) is None
    for path, text in change.items():
        path.write_text(text)
    assert await checkpoints.after_change(use_id) is None


async def _turn_with_person_edits(tmp_path: Path, workspace: Path) -> SessionCheckpoints:
    """The agent changes two lines of code.py and writes new.py; the person adds a line to code.py between the
    calls and saves notes.md."""
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    (workspace / "code.py").write_text("a\nb\nc\nd\ne\nf\ng\n")
    (workspace / "notes.md").write_text("mine\n")
    await checkpoints.begin_turn()
    await _agent_call(checkpoints, "t1", {workspace / "code.py": "a\nB\nc\nd\ne\nf\ng\n"})
    (workspace / "code.py").write_text("a\nB\nc\nd\ne\nf\ng\nthe person's line\n")
    (workspace / "notes.md").write_text("mine\nmore\n")
    await _agent_call(
        checkpoints,
        "t2",
        {workspace / "code.py": "a\nB\nc\nd\ne\nF\ng\nthe person's line\n", workspace / "new.py": "n\n"},
    )
    await checkpoints.end_turn()
    return checkpoints


async def test_the_bar_lists_the_agents_hunks_and_not_the_persons(tmp_path: Path, workspace: Path) -> None:
    checkpoints = await _turn_with_person_edits(tmp_path, workspace)
    listing = list_changes(checkpoints.store(), "s1", ChangesReview())
    files = {entry.path: entry for entry in listing.files}
    assert set(files) == {"code.py", "new.py"}
    assert [(h.old, h.new) for h in files["code.py"].hunks] == [(("b\n",), ("B\n",)), (("f\n",), ("F\n",))]
    assert files["new.py"].without is None and [h.new for h in files["new.py"].hunks] == [("n\n",)]


async def test_undoing_one_hunk_keeps_the_other_and_the_persons_line(tmp_path: Path, workspace: Path) -> None:
    checkpoints = await _turn_with_person_edits(tmp_path, workspace)
    store, review = checkpoints.store(), ChangesReview()
    code = next(e for e in list_changes(store, "s1", review).files if e.path == "code.py")
    redo = undo_hunk(store, "s1", "code.py", code.hunks[1], turn=1)
    assert (workspace / "code.py").read_text() == "a\nB\nc\nd\ne\nf\ng\nthe person's line\n"
    left = next(e for e in list_changes(store, "s1", review).files if e.path == "code.py")
    assert [(h.old, h.new) for h in left.hunks] == [(("b\n",), ("B\n",))]
    assert "code.py" in (store.take_notice("s1") or "")  # the model's next request is told

    checkpoints.restore(redo)  # the undo is taken back
    assert (workspace / "code.py").read_text() == "a\nB\nc\nd\ne\nF\ng\nthe person's line\n"


async def test_a_hunk_the_person_edited_since_is_a_conflict(tmp_path: Path, workspace: Path) -> None:
    checkpoints = await _turn_with_person_edits(tmp_path, workspace)
    store = checkpoints.store()
    code = next(e for e in list_changes(store, "s1", ChangesReview()).files if e.path == "code.py")
    (workspace / "code.py").write_text("a\nB\nc\nd\ne\nF, reworded by the person\ng\nthe person's line\n")
    with pytest.raises(HunkConflict):
        undo_hunk(store, "s1", "code.py", code.hunks[1], turn=1)
    assert (workspace / "code.py").read_text() == "a\nB\nc\nd\ne\nF, reworded by the person\ng\nthe person's line\n"


async def test_undo_of_a_file_stops_at_a_conflict_unless_the_undo_is_taken(tmp_path: Path, workspace: Path) -> None:
    checkpoints = await _turn_with_person_edits(tmp_path, workspace)
    store, review = checkpoints.store(), ChangesReview()
    (workspace / "code.py").write_text("a\nB, and the person's words\nc\nd\ne\nF\ng\nthe person's line\n")
    entry = next(e for e in list_changes(store, "s1", review).files if e.path == "code.py")
    assert entry.conflict is not None and entry.hunks == []

    outcome = undo_files(store, "s1", review, None, turn=1)
    assert [c.path for c in outcome.conflicts] == ["code.py"] and outcome.undone == ["new.py"]
    assert "B, and the person's words" in (workspace / "code.py").read_text()
    assert not (workspace / "new.py").exists() and (workspace / "notes.md").read_text() == "mine\nmore\n"

    taken = undo_files(store, "s1", review, ["code.py"], turn=1, take_undo=True)
    assert taken.undone == ["code.py"] and taken.conflicts == []
    assert (workspace / "code.py").read_text() == "a\nb\nc\nd\ne\nf\ng\nthe person's line\n"


async def test_keep_drops_a_hunk_or_a_file_without_changing_it(tmp_path: Path, workspace: Path) -> None:
    checkpoints = await _turn_with_person_edits(tmp_path, workspace)
    store, review = checkpoints.store(), ChangesReview()
    code = next(e for e in list_changes(store, "s1", review).files if e.path == "code.py")
    keep(store, "s1", review, "code.py", code.hunks[0])
    code = next(e for e in list_changes(store, "s1", review).files if e.path == "code.py")
    assert [(h.old, h.new) for h in code.hunks] == [(("f\n",), ("F\n",))]

    # Undoing the file now takes back only what is still shown: the kept hunk stays.
    undo_files(store, "s1", review, ["code.py"], turn=1)
    assert (workspace / "code.py").read_text() == "a\nB\nc\nd\ne\nf\ng\nthe person's line\n"

    keep(store, "s1", review, "new.py", None)
    assert list_changes(store, "s1", review).files == []
    assert (workspace / "new.py").read_text() == "n\n"


async def test_a_kept_file_shows_again_when_the_agent_changes_it_later(tmp_path: Path, workspace: Path) -> None:
    checkpoints = await _turn_with_person_edits(tmp_path, workspace)
    store, review = checkpoints.store(), ChangesReview()
    keep(store, "s1", review, "new.py", None)
    await checkpoints.begin_turn()
    await _agent_call(checkpoints, "t3", {workspace / "new.py": "n\nsecond\n"})
    entry = next(e for e in list_changes(store, "s1", review).files if e.path == "new.py")
    assert [(h.old, h.new) for h in entry.hunks] == [((), ("second\n",))]


async def test_listing_asks_git_to_merge_only_what_it_cannot_merge_apart_and_each_question_once(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lines no other test writes: git's answers are remembered for the whole process, by the files' contents.
    code = workspace / "counted.py"
    code.write_text("one\ntwo\nthree\nfour\nfive\n")
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    await checkpoints.begin_turn()
    await _agent_call(checkpoints, "t1", {code: "one\nTWO\nthree\nfour\nfive\n"})
    await _agent_call(checkpoints, "t2", {code: "one\nTWO\nthree\nFOUR\nfive\n"})
    await checkpoints.end_turn()
    store, review = checkpoints.store(), ChangesReview()
    merges: list[list[str]] = []
    run = ShadowGit.run

    def counting(git: ShadowGit, args: Sequence[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        if args[0] == "merge-file":
            merges.append(list(args))
        return run(git, args, **options)

    monkeypatch.setattr(ShadowGit, "run", counting)

    def listed() -> FileEntry:
        return next(e for e in list_changes(store, "s1", review).files if e.path == "counted.py")

    # The person's line at the end is apart from the agent's lines: both calls undone with no git process.
    code.write_text("one\nTWO\nthree\nFOUR\nfive\nsix, the person's\n")
    assert [(h.old, h.new) for h in listed().hunks] == [(("two\n",), ("TWO\n",)), (("four\n",), ("FOUR\n",))]
    assert merges == []

    # A line the agent changed, reworded by the person: git decides (a conflict), once for this version of the file.
    code.write_text("one\nTWO\nthree\nFOUR, in the person's words\nfive\nsix, the person's\n")
    for _ in range(2):
        conflict = listed().conflict
        assert conflict is not None and "(1 place)" in conflict
    assert len(merges) == 1

    # Edited again after that listing: a new version of the file, merged again.
    code.write_text("one\nTWO\nthree\nFOUR, in the person's other words\nfive\nsix, the person's\n")
    assert listed().conflict is not None and len(merges) == 2


@pytest.mark.parametrize("how", ["file", "hunk"])
async def test_a_file_saved_while_the_undo_is_prepared_is_left_as_saved(
    tmp_path: Path, workspace: Path, how: str
) -> None:
    """The undo's new bytes are made from the file as it was read; a save after that read (here: while the editor is
    asked about unsaved changes, just before the write) would be lost to them. Nothing is written, the save stands
    and the undo says to run it again."""
    checkpoints = await _turn_with_person_edits(tmp_path, workspace)
    store, review = checkpoints.store(), ChangesReview()
    code = workspace / "code.py"
    saved = "a\nB\nc\nd\ne\nF\ng\nthe person's line\nsaved just now\n"

    def saving(path: Path) -> bool:
        if path == code:
            code.write_text(saved)
        return False

    with pytest.raises(CheckpointError, match=r"code\.py changed while the undo was being prepared"):
        if how == "file":
            undo_files(store, "s1", review, None, turn=1, is_dirty=saving)
        else:
            entry = next(e for e in list_changes(store, "s1", review).files if e.path == "code.py")
            undo_hunk(store, "s1", "code.py", entry.hunks[1], turn=1, is_dirty=saving)
    assert code.read_text() == saved
    assert (workspace / "new.py").exists()  # nothing else was undone either
    outcome = undo_files(store, "s1", review, None, turn=1)  # run again: made from the saved file
    assert code.read_text() == "a\nb\nc\nd\ne\nf\ng\nthe person's line\nsaved just now\n" and outcome.conflicts == []
