"""Rewinding the conversation (and both): the transcript is cut back to before a turn's user message in one
step, the redo checkpoint brings it back, and a checkpoint whose conversation was cut away since is still found
in the transcripts the redo checkpoints keep."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.session import SessionCheckpoints


def _say(transcript: Path, *lines: str) -> None:
    with transcript.open("a", encoding="utf-8") as handle:
        handle.writelines(f'{{"type":"message","text":"{line}"}}\n' for line in lines)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    return tmp_path / "session" / "transcript.jsonl"


@pytest.fixture
def checkpoints(tmp_path: Path, workspace: Path, transcript: Path) -> SessionCheckpoints:
    transcript.parent.mkdir()
    return SessionCheckpoints(tmp_path / "data", workspace, "s1", transcript=transcript)


async def _turn(checkpoints: SessionCheckpoints, transcript: Path, *lines: str) -> str:
    """One turn: its checkpoint, then what was said in it. Returns the turn checkpoint's id."""
    assert await checkpoints.begin_turn() is None
    _say(transcript, *lines)
    return checkpoints.checkpoints()[-1].id


async def test_conversation_goes_back_to_before_the_message_and_redo_brings_it_back(
    checkpoints: SessionCheckpoints, transcript: Path, workspace: Path
) -> None:
    first = await _turn(checkpoints, transcript, "u1", "a1")
    (workspace / "f.txt").write_text("made in turn 2\n")
    second = await _turn(checkpoints, transcript, "u2", "a2")
    before = transcript.read_bytes()

    report, differ = checkpoints.restore(second, what="conversation")
    assert transcript.read_text() == '{"type":"message","text":"u1"}\n{"type":"message","text":"a1"}\n'
    assert report.entries_removed == 2 and report.changes == [] and report.redo is not None
    assert (workspace / "f.txt").read_text() == "made in turn 2\n"  # files untouched
    assert differ == []  # the file was there before turn 2's message too
    assert checkpoints.take_restore_notice() is None

    checkpoints.restore(report.redo, what="conversation")
    assert transcript.read_bytes() == before

    checkpoints.restore(first, what="conversation")
    assert transcript.read_bytes() == b""


async def test_both_restores_files_and_conversation_and_a_conversation_rewind_announces_files_that_differ(
    checkpoints: SessionCheckpoints, transcript: Path, workspace: Path
) -> None:
    (workspace / "f.txt").write_text("v1\n")
    first = await _turn(checkpoints, transcript, "u1")
    (workspace / "f.txt").write_text("v2\n")
    await _turn(checkpoints, transcript, "u2")

    report, differ = checkpoints.restore(first, what="conversation")
    assert differ == [workspace / "f.txt"]  # its readFileState is dropped too
    notice = checkpoints.take_restore_notice()
    assert notice is not None and "kept the files as they are" in notice and "f.txt" in notice
    assert report.redo is not None
    checkpoints.restore(report.redo, what="conversation")
    assert transcript.read_text().count("\n") == 2

    both, _ = checkpoints.restore(first, what="both", whole_tree=True)
    assert (workspace / "f.txt").read_text() == "v1\n" and transcript.read_bytes() == b""
    assert [c.path for c in both.changes] == ["f.txt"] and both.what == "both"
    assert checkpoints.take_restore_notice() is None  # files and conversation agree: nothing to tell
    assert both.redo is not None
    checkpoints.restore(both.redo, what="both", whole_tree=True)
    assert (workspace / "f.txt").read_text() == "v2\n" and transcript.read_text().count("\n") == 2


async def test_a_conversation_cut_away_since_is_found_in_the_kept_transcripts(
    checkpoints: SessionCheckpoints, transcript: Path
) -> None:
    await _turn(checkpoints, transcript, "u1", "a1")
    second = await _turn(checkpoints, transcript, "u2", "a2")
    third = await _turn(checkpoints, transcript, "u3", "a3")
    checkpoints.restore(second, what="conversation")
    await _turn(checkpoints, transcript, "other u2", "other a2")  # the conversation goes another way

    # Turn 3's point is not a prefix of the transcript now, but the redo checkpoint kept it.
    checkpoints.restore(third, what="conversation")
    assert transcript.read_text().splitlines()[-1] == '{"type":"message","text":"a2"}'
    assert "other" not in transcript.read_text()


async def test_a_conversation_rewind_needs_a_turn_checkpoint_and_fails_cleanly(
    checkpoints: SessionCheckpoints, transcript: Path, workspace: Path
) -> None:
    await _turn(checkpoints, transcript, "u1")
    first = await _turn(checkpoints, transcript, "u2")
    (workspace / "f.txt").write_text("x\n")
    tool = await checkpoints.before_change("toolu_1")
    assert tool is None
    [_, _, before_tool] = checkpoints.checkpoints()
    with pytest.raises(CheckpointError, match=f"before a tool call.*turn starts at checkpoint {first}"):
        checkpoints.restore(before_tool.id, what="conversation")

    # Refused over unsaved buffers: neither the files nor the conversation change.
    (workspace / "f.txt").write_text("y\n")
    said = transcript.read_bytes()
    with pytest.raises(CheckpointError, match="unsaved"):
        checkpoints.restore(first, what="both", is_dirty=lambda path: path.name == "f.txt", whole_tree=True)
    assert transcript.read_bytes() == said and (workspace / "f.txt").read_text() == "y\n"

    # A transcript changed by hand: the point is gone, and the error says what still works.
    transcript.write_text('{"type":"message","text":"rewritten"}\n')
    with pytest.raises(CheckpointError, match=r"no longer kept.*--code"):
        checkpoints.restore(first, what="conversation")


async def test_a_session_without_a_transcript_rewinds_only_files(tmp_path: Path, workspace: Path) -> None:
    checkpoints = SessionCheckpoints(tmp_path / "data", workspace, "tools-only")
    await checkpoints.begin_turn()
    with pytest.raises(CheckpointError, match="keeps no conversation"):
        checkpoints.restore(checkpoints.checkpoints()[0].id, what="both")


async def test_a_code_restore_is_announced_to_the_next_session_process(
    tmp_path: Path, workspace: Path, checkpoints: SessionCheckpoints, transcript: Path
) -> None:
    (workspace / "app.py").write_text("v1\n")
    first = await _turn(checkpoints, transcript, "u1")
    (workspace / "app.py").write_text("v2\n")
    checkpoints.restore(first, whole_tree=True)  # the person's own edit: only a whole-tree restore takes it
    # The notice is kept with the store: a session reopened later (a resumed chat --print) still hears it.
    again = SessionCheckpoints(tmp_path / "data", workspace, "s1", transcript=transcript)
    notice = again.take_restore_notice()
    assert notice is not None and f"restored 1 file(s) to checkpoint {first} (turn 1): app.py" in notice
    assert again.take_restore_notice() is None and checkpoints.take_restore_notice() is None
