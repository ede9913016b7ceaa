"""Undo and restore never write outside the workspace through a folder the agent swapped for a symbolic link:
not from the changes bar (a file, a hunk), not by undoing the agent's changes, not by a whole-tree restore, even
when the swap happens after the folders on the way were checked."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from toolgate.checkpoints import restore as restore_module
from toolgate.checkpoints.changes import ChangesReview, keep, list_changes, undo_files, undo_hunk
from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.session import SessionCheckpoints
from toolgate.text.hunks import HunkConflict

KEYS = "ssh-ed25519 AAAA the-attackers-key\n"


async def _agent_call(checkpoints: SessionCheckpoints, use_id: str, call: Any) -> None:
    """What the runner does around a call that may change files, with `call` as the (sandboxed) call."""
    assert await checkpoints.before_change(use_id) is None
    call()
    assert await checkpoints.after_change(use_id) is None


def _swap_for_link(folder: Path, outside: Path) -> None:
    os.rmdir(folder)
    folder.symlink_to(outside)


async def _written_deleted_then_linked(
    tmp_path: Path, workspace: Path, review: ChangesReview
) -> tuple[SessionCheckpoints, str, str]:
    """Turn 1: the agent writes dir/authorized_keys, and the person keeps it (the bar stops showing it). Turn 2:
    the agent deletes the file, then swaps `dir` for a link to a folder outside the workspace. Returns the session
    and the checkpoints after turn 1 and at turn 2's start."""
    (tmp_path / "outside").mkdir()
    (workspace / "dir").mkdir()
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    keys = workspace / "dir" / "authorized_keys"
    await checkpoints.begin_turn()
    await _agent_call(checkpoints, "t1", lambda: keys.write_text(KEYS))
    await checkpoints.end_turn()
    after_write = checkpoints.checkpoints()[-1].id
    keep(checkpoints.store(), "s1", review, "dir/authorized_keys", None)
    await checkpoints.begin_turn()
    turn_two = checkpoints.checkpoints()[-1].id
    await _agent_call(checkpoints, "t2", keys.unlink)
    await _agent_call(checkpoints, "t3", lambda: _swap_for_link(workspace / "dir", tmp_path / "outside"))
    await checkpoints.end_turn()
    return checkpoints, after_write, turn_two


def _outside(tmp_path: Path) -> list[str]:
    return sorted(os.listdir(tmp_path / "outside"))


async def test_undoing_the_deleted_file_in_the_bar_leaves_the_folder_outside_alone(
    tmp_path: Path, workspace: Path
) -> None:
    review = ChangesReview()
    checkpoints, _, _ = await _written_deleted_then_linked(tmp_path, workspace, review)
    outcome = undo_files(checkpoints.store(), "s1", review, ["dir/authorized_keys"], turn=3)
    assert _outside(tmp_path) == []
    assert [c.path for c in outcome.conflicts] == ["dir/authorized_keys"] and outcome.undone == []


async def test_taking_the_undo_over_the_link_is_refused_by_name(tmp_path: Path, workspace: Path) -> None:
    review = ChangesReview()
    checkpoints, _, _ = await _written_deleted_then_linked(tmp_path, workspace, review)
    refused = r"dir/authorized_keys was not undone: dir on the way to it is a symbolic link"
    with pytest.raises(CheckpointError, match=refused):
        undo_files(checkpoints.store(), "s1", review, ["dir/authorized_keys"], turn=3, take_undo=True)
    assert _outside(tmp_path) == [] and (workspace / "dir").is_symlink()


async def test_undoing_the_agents_changes_does_not_follow_the_swapped_folder(tmp_path: Path, workspace: Path) -> None:
    checkpoints, _, turn_two = await _written_deleted_then_linked(tmp_path, workspace, ChangesReview())
    report, _ = checkpoints.restore(turn_two)
    assert _outside(tmp_path) == []
    assert {c.path for c in report.conflicts} == {"dir", "dir/authorized_keys"}  # both left to the person


async def test_a_folder_swapped_for_a_link_after_the_restore_checked_it_is_not_followed(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoints, after_write, _ = await _written_deleted_then_linked(tmp_path, workspace, ChangesReview())
    write_files = restore_module._write_files

    def swap_then_write(*args: Any) -> None:
        # `_make_room` has made `dir` a real folder again; the agent's process swaps it back right now.
        _swap_for_link(workspace / "dir", tmp_path / "outside")
        write_files(*args)

    monkeypatch.setattr(restore_module, "_write_files", swap_then_write)
    restore(checkpoints.store(), "s1", after_write, turn=3)
    assert _outside(tmp_path) == []
    assert not (workspace / "dir").is_symlink() and (workspace / "dir" / "authorized_keys").read_text() == KEYS


async def test_undoing_a_hunk_does_not_write_through_a_swapped_folder(tmp_path: Path, workspace: Path) -> None:
    (workspace / "dir").mkdir()
    (workspace / "dir" / "authorized_keys").write_text("alice\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "authorized_keys").write_text("alice\nmallory\n")  # what the agent's change left, elsewhere
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    await checkpoints.begin_turn()
    await _agent_call(checkpoints, "t1", lambda: (workspace / "dir" / "authorized_keys").write_text("alice\nmallory\n"))
    await checkpoints.end_turn()
    store = checkpoints.store()
    [entry] = list_changes(store, "s1", ChangesReview()).files
    os.unlink(workspace / "dir" / "authorized_keys")
    _swap_for_link(workspace / "dir", outside)
    with pytest.raises(HunkConflict):
        undo_hunk(store, "s1", "dir/authorized_keys", entry.hunks[0], turn=2)
    assert (outside / "authorized_keys").read_text() == "alice\nmallory\n"


async def test_emptied_folders_are_not_removed_through_a_folder_swapped_for_a_link(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "outside" / "sub").mkdir(parents=True)  # an empty folder of the person's, outside the workspace
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    await checkpoints.begin_turn()
    before = checkpoints.checkpoints()[-1].id
    made = workspace / "gen" / "sub" / "f.txt"
    await _agent_call(checkpoints, "t1", lambda: (made.parent.mkdir(parents=True), made.write_text("x")))
    await checkpoints.end_turn()
    remove_file = restore_module.remove_file_beneath

    def swap_then_remove(root: Path, path: bytes) -> None:
        # The restore has captured the tree; the agent's process swaps `gen` for a link right now.
        os.unlink(made)
        os.rmdir(made.parent)
        _swap_for_link(workspace / "gen", tmp_path / "outside")
        remove_file(root, path)

    monkeypatch.setattr(restore_module, "remove_file_beneath", swap_then_remove)
    restore(checkpoints.store(), "s1", before, turn=2)
    assert _outside(tmp_path) == ["sub"]
