"""Attribution: undo reverses what the agent's calls changed (checkpoint right before → right after each call)
and keeps what the person changed between calls; the same lines changed by both are a conflict, left alone."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.checkpoints.attribution import conflict_message
from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.session import SessionCheckpoints
from toolgate.checkpoints.settings import CheckpointSettings

SLOTS = 5  # lines either side may change; an untouched line between any two (git merge-file needs the gap)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


async def _agent_call(checkpoints: SessionCheckpoints, use_id: str, change: dict[Path, str | None]) -> None:
    """What the runner does around a call that may change files, with `change` as the call."""
    assert await checkpoints.before_change(use_id) is None
    for path, text in change.items():
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
    assert await checkpoints.after_change(use_id) is None


async def test_undo_keeps_what_the_person_saved_between_calls(tmp_path: Path, workspace: Path) -> None:
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    code, notes = workspace / "code.py", workspace / "notes.md"
    code.write_text("a\nb\nc\nd\n")
    notes.write_text("mine\n")
    await checkpoints.begin_turn()
    start = checkpoints.checkpoints()[0].id
    await _agent_call(checkpoints, "t1", {code: "A\nb\nc\nd\n", workspace / "made.py": "new\n"})
    notes.write_text("mine\nmore of mine\n")  # the person, between calls
    code.write_text("A\nb\nc\nd\nperson's line\n")
    await _agent_call(checkpoints, "t2", {code: "A\nb\nC\nd\nperson's line\n"})

    preview, _ = checkpoints.restore(start, dry_run=True)
    assert {c.path: c.action for c in preview.changes} == {"code.py": "write", "made.py": "remove"}
    assert "-A\n+a\n" in preview.diff and "notes.md" not in preview.diff
    report, touched = checkpoints.restore(start)
    assert code.read_text() == "a\nb\nc\nd\nperson's line\n"
    assert notes.read_text() == "mine\nmore of mine\n" and not (workspace / "made.py").exists()
    assert report.conflicts == [] and set(touched) == {code, workspace / "made.py"}

    assert report.redo is not None  # the redo point is the whole tree before the undo
    checkpoints.restore(report.redo)
    assert code.read_text() == "A\nb\nC\nd\nperson's line\n" and (workspace / "made.py").exists()


async def test_the_same_lines_changed_since_are_a_conflict_left_as_they_are(tmp_path: Path, workspace: Path) -> None:
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    (workspace / "shared.txt").write_text("one\ntwo\nthree\n")
    (workspace / "other.txt").write_text("x\n")
    await checkpoints.begin_turn()
    start = checkpoints.checkpoints()[0].id
    await _agent_call(
        checkpoints,
        "t1",
        {workspace / "shared.txt": "one\nTWO\nthree\n", workspace / "other.txt": "X\n", workspace / "gen.txt": "g\n"},
    )
    (workspace / "shared.txt").write_text("one\nTwo, by the person\nthree\n")
    (workspace / "gen.txt").write_text("g\nthe person's addition\n")

    report, _ = checkpoints.restore(start)
    assert (workspace / "shared.txt").read_text() == "one\nTwo, by the person\nthree\n"  # never overwritten
    assert (workspace / "gen.txt").read_text() == "g\nthe person's addition\n"
    assert (workspace / "other.txt").read_text() == "x\n"  # the rest is undone
    assert sorted((c.path, c.reason) for c in report.conflicts) == [
        ("gen.txt", "the agent created it, and it was edited since"),
        ("shared.txt", "the same lines were edited since the agent changed them (1 place)"),
    ]
    message = conflict_message(report, "--whole-tree")
    assert message.startswith("2 files were left as they are, because you changed them where the agent did: ")
    assert "shared.txt: the same lines" in message and f"to checkpoint {start} with --whole-tree" in message

    whole, _ = checkpoints.restore(start, whole_tree=True)  # the explicit way to take everything back
    assert whole.conflicts == [] and (workspace / "shared.txt").read_text() == "one\ntwo\nthree\n"
    assert not (workspace / "gen.txt").exists()


async def test_a_person_only_session_has_nothing_to_undo(tmp_path: Path, workspace: Path) -> None:
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    (workspace / "f.txt").write_text("v1\n")
    await checkpoints.begin_turn()
    (workspace / "f.txt").write_text("v2\n")  # saved by the person; no call ran
    await checkpoints.begin_turn()
    report, touched = checkpoints.restore(checkpoints.checkpoints()[0].id)
    assert report.changes == [] and touched == [] and (workspace / "f.txt").read_text() == "v2\n"


# One edit: (who, which file, which slot, its new text).
EDITS = st.lists(
    st.tuples(
        st.sampled_from(["agent", "person"]), st.integers(0, 1), st.integers(0, SLOTS - 1), st.text("xyz", min_size=1)
    ),
    max_size=12,
)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=EDITS, owners=st.lists(st.sampled_from(["agent", "person"]), min_size=SLOTS, max_size=SLOTS))
def test_undoing_every_agent_call_leaves_exactly_the_persons_changes(
    edits: list[tuple[str, int, int, str]], owners: list[str]
) -> None:
    """Each slot (odd line) is changed by one side only, so agent and person never touch neighbouring lines."""

    async def run() -> None:
        with tempfile.TemporaryDirectory() as temp:
            workspace = Path(temp) / "ws"
            workspace.mkdir()
            files = [workspace / "one.txt", workspace / "two.txt"]
            original = [f"keep {n}" if n % 2 == 0 else f"slot {n // 2}" for n in range(2 * SLOTS + 1)]
            for path in files:
                path.write_text("\n".join(original) + "\n")
            expected = [list(original), list(original)]
            checkpoints = SessionCheckpoints(Path(temp) / "data", workspace, "p")
            await checkpoints.begin_turn()
            start = checkpoints.checkpoints()[0].id
            for number, (who, file, slot, text) in enumerate(edits):
                if owners[slot] != who:
                    continue
                lines = _lines(files[file])
                lines[2 * slot + 1] = f"{who} {number} {text}"
                if who == "agent":
                    await _agent_call(checkpoints, f"t{number}", {files[file]: "\n".join(lines) + "\n"})
                else:
                    files[file].write_text("\n".join(lines) + "\n")
                    expected[file][2 * slot + 1] = lines[2 * slot + 1]
            report, _ = checkpoints.restore(start)
            assert report.conflicts == []
            assert [_lines(path) for path in files] == expected

    anyio.run(run)


@pytest.mark.parametrize("whole_tree", [False, True])
async def test_a_restore_redo_point_is_always_the_whole_tree(tmp_path: Path, workspace: Path, whole_tree: bool) -> None:
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    await checkpoints.begin_turn()
    start = checkpoints.checkpoints()[0].id
    await _agent_call(checkpoints, "t1", {workspace / "a.txt": "agent\n"})
    (workspace / "b.txt").write_text("person\n")
    report, _ = checkpoints.restore(start, whole_tree=whole_tree)
    assert not (workspace / "a.txt").exists() and (workspace / "b.txt").exists() is not whole_tree
    assert report.redo is not None
    checkpoints.restore(report.redo)  # going back to a redo point brings back every file it held
    assert (workspace / "a.txt").read_text() == "agent\n" and (workspace / "b.txt").read_text() == "person\n"


async def test_links_are_conflicts_and_uncaptured_files_are_not_undoable(tmp_path: Path, workspace: Path) -> None:
    settings = CheckpointSettings(max_file_bytes=100)
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1", settings)
    (workspace / "old-large.bin").write_bytes(b"x" * 200)  # skipped all along: not the agent's doing
    (workspace / "target.txt").write_text("t\n")
    (workspace / "link").symlink_to("target.txt")
    await checkpoints.begin_turn()
    start = checkpoints.checkpoints()[0].id
    assert await checkpoints.before_change("t1") is None
    (workspace / "link").unlink()
    (workspace / "link").symlink_to("elsewhere.txt")
    (workspace / "large.bin").write_bytes(b"y" * 200)
    assert await checkpoints.after_change("t1") is None

    report, _ = checkpoints.restore(start)
    assert [(c.path, c.reason) for c in report.conflicts] == [
        ("link", "a symbolic link the agent changed: only a whole-tree restore puts links back")
    ]
    assert report.not_undoable == ["large.bin"] and os.readlink(workspace / "link") == "elsewhere.txt"


async def test_a_file_saved_while_an_undo_of_the_agent_is_prepared_is_left_as_saved(
    tmp_path: Path, workspace: Path
) -> None:
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    code = workspace / "code.py"
    code.write_text("a\nb\nc\nd\n")
    await checkpoints.begin_turn()
    start = checkpoints.checkpoints()[0].id
    await _agent_call(checkpoints, "t1", {code: "A\nb\nc\nd\n"})

    def saving(path: Path) -> bool:  # asked right before the undo writes: the person saves at that moment
        if path == code:
            code.write_text("A\nb\nc\nd\nsaved\n")
        return False

    with pytest.raises(CheckpointError, match=r"code\.py changed while the undo was being prepared"):
        checkpoints.restore(start, is_dirty=saving)
    assert code.read_text() == "A\nb\nc\nd\nsaved\n"
    checkpoints.restore(start)
    assert code.read_text() == "a\nb\nc\nd\nsaved\n"
