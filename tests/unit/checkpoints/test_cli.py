"""`toolgate checkpoints list` and `toolgate rewind`, run as real processes against a real store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from toolgate.checkpoints.session import SessionCheckpoints
from toolgate.checkpoints.store import CheckpointStore
from toolgate.session_files import SessionFiles


def _toolgate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgate", *args], capture_output=True, text=True, timeout=120, check=False
    )


def _session(tmp_path: Path, workspace: Path) -> tuple[Path, str]:
    data = tmp_path / "data"
    store = CheckpointStore(data, workspace)
    (workspace / "f.txt").write_text("one\n")
    store.create("s1", turn=1, kind="turn")
    (workspace / "f.txt").write_text("two\n")
    (workspace / "g.txt").write_text("g\n")
    store.create("s1", turn=1, tool_use_id="toolu_1")
    return data, "s1"


def test_list_prints_one_json_line_per_checkpoint(tmp_path: Path, workspace: Path) -> None:
    data, session = _session(tmp_path, workspace)
    done = _toolgate("checkpoints", "list", "--session", session, "--data-dir", str(data))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(c["id"], c["turn"], c["tool_use_id"], c["kind"]) for c in lines] == [
        ("000001", 1, None, "turn"),
        ("000002", 1, "toolu_1", "tool"),
    ]
    assert lines[1]["changed"] == ["f.txt", "g.txt"] and lines[1]["skipped"] == []
    assert {"time"} <= lines[0].keys()


def test_rewind_dry_run_then_rewind_then_undo(tmp_path: Path, workspace: Path) -> None:
    data, session = _session(tmp_path, workspace)
    common = ("--session", session, "--data-dir", str(data))
    dry = _toolgate("rewind", *common, "--to", "000001", "--whole-tree", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would restore 2 file(s)" in dry.stdout and "-two\n+one\n" in dry.stdout
    assert (workspace / "f.txt").read_text() == "two\n"
    done = _toolgate("rewind", *common, "--to", "000001", "--code", "--whole-tree")
    assert done.returncode == 0, done.stderr
    assert (workspace / "f.txt").read_text() == "one\n" and not (workspace / "g.txt").exists()
    undo = done.stdout.splitlines()[-1]
    assert (
        undo
        == f"undo this with: toolgate rewind --session {session} --to 000003 --whole-tree --data-dir {data.resolve()}"
    )
    assert _toolgate("rewind", *common, "--to", "000003", "--whole-tree").returncode == 0
    assert (workspace / "f.txt").read_text() == "two\n" and (workspace / "g.txt").read_text() == "g\n"


def test_rewind_fails_with_a_reason(tmp_path: Path, workspace: Path) -> None:
    data, session = _session(tmp_path, workspace)
    unknown = _toolgate("rewind", "--session", session, "--data-dir", str(data), "--to", "000042")
    assert unknown.returncode == 1 and "no checkpoint '000042'" in unknown.stderr
    nobody = _toolgate("checkpoints", "list", "--session", "nobody", "--data-dir", str(data))
    assert nobody.returncode == 1 and "session 'nobody' has no checkpoints" in nobody.stderr


async def test_rewind_conversation_and_both_cut_the_transcript_and_say_how_to_undo(
    tmp_path: Path, workspace: Path
) -> None:
    data = tmp_path / "data"
    files = SessionFiles(data)
    files.create(workspace, session_id="chat-1")
    transcript = files.transcript_path("chat-1")
    checkpoints = SessionCheckpoints(data, workspace, "chat-1", transcript=transcript)
    (workspace / "f.txt").write_text("one\n")
    await checkpoints.begin_turn()
    transcript.write_text('{"type":"message"}\n{"type":"message"}\n')
    (workspace / "f.txt").write_text("two\n")
    await checkpoints.begin_turn()
    transcript.write_text(transcript.read_text() + '{"type":"message"}\n')
    said = transcript.read_text()
    common = ("--session", "chat-1", "--data-dir", str(data))

    dry = _toolgate("rewind", *common, "--to", "000001", "--both", "--whole-tree", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would restore 1 file(s)" in dry.stdout and "would go back to checkpoint 000001 (3 entries" in dry.stdout
    assert transcript.read_text() == said

    cut = _toolgate("rewind", *common, "--to", "000002", "--conversation")
    assert cut.returncode == 0, cut.stderr
    assert "went back to checkpoint 000002 (1 entries removed)" in cut.stdout and "file(s)" not in cut.stdout
    assert transcript.read_text().count("\n") == 2 and (workspace / "f.txt").read_text() == "two\n"
    undo = cut.stdout.splitlines()[-1]
    assert undo == f"undo this with: toolgate rewind --session chat-1 --to 000003 --conversation --data-dir {data}"
    assert _toolgate(*undo.removeprefix("undo this with: toolgate ").split(" ")).returncode == 0
    assert transcript.read_text() == said

    both = _toolgate("rewind", *common, "--to", "000001", "--both", "--whole-tree")
    assert both.returncode == 0, both.stderr
    assert transcript.read_text() == "" and (workspace / "f.txt").read_text() == "one\n"


def test_rewind_is_refused_while_another_process_has_the_session_and_a_dry_run_is_not(
    tmp_path: Path, workspace: Path
) -> None:
    data = tmp_path / "data"
    files = SessionFiles(data)
    files.create(workspace, session_id="chat-2")
    store = CheckpointStore(data, workspace)
    (workspace / "f.txt").write_text("one\n")
    store.create("chat-2", turn=1, kind="turn")
    (workspace / "f.txt").write_text("two\n")
    store.create("chat-2", turn=1, tool_use_id="toolu_1")
    common = ("--session", "chat-2", "--data-dir", str(data), "--to", "000001")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_SESSION, str(files.session_dir("chat-2"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        refused = _toolgate("rewind", *common)
        assert refused.returncode == 1
        assert refused.stderr.startswith("toolgate rewind: Session chat-2 is open in another toolgate process")
        assert f"toolgate chat, pid {holder.pid}" in refused.stderr
        assert (workspace / "f.txt").read_text() == "two\n"  # nothing was restored
        assert "would restore 1 file(s)" in _toolgate("rewind", *common, "--whole-tree", "--dry-run").stdout
    finally:
        holder.kill()
        holder.wait(timeout=30)
    done = _toolgate("rewind", *common, "--whole-tree")
    assert done.returncode == 0, done.stderr
    assert (workspace / "f.txt").read_text() == "one\n"


HOLD_SESSION = """
import sys
from pathlib import Path
from toolgate.session_lease import hold_session
hold_session(Path(sys.argv[1]), "toolgate chat", doing="resumed")
print("held", flush=True)
sys.stdin.read()
"""


async def test_rewind_code_leaves_a_conflicting_file_as_it_is_and_says_what_to_do(
    tmp_path: Path, workspace: Path
) -> None:
    data = tmp_path / "data"
    checkpoints = SessionCheckpoints(data, workspace, "s3")
    (workspace / "f.txt").write_text("one\n")
    await checkpoints.begin_turn()
    assert await checkpoints.before_change("toolu_1") is None
    (workspace / "f.txt").write_text("agent\n")  # the call
    (workspace / "g.txt").write_text("g\n")
    assert await checkpoints.after_change("toolu_1") is None
    (workspace / "f.txt").write_text("the person's\n")  # the same line, since

    done = _toolgate("rewind", "--session", "s3", "--data-dir", str(data), "--to", "000001")
    assert done.returncode == 1
    assert (workspace / "f.txt").read_text() == "the person's\n" and not (workspace / "g.txt").exists()
    assert "undid the agent's changes since checkpoint 000001 in 1 file(s)\n  remove g.txt\n" in done.stdout
    assert "  kept   f.txt (conflict: the same lines were edited since the agent changed them" in done.stdout
    assert done.stderr.startswith("toolgate rewind: ")
    assert " was left as it is, because you changed it where the agent did: " in done.stderr
    assert "with --whole-tree (that also takes back your own edits made since)" in done.stderr
