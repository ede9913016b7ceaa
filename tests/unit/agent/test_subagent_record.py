"""A child's run as its steps build it and as a person reads it back: a run that never ended (the session crashed or
was killed while it ran) is interrupted, unless its Agent call runs right now; exports say how each run ended."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.events import TurnEnd, Usage
from toolgate.agent.subagent_record import (
    CallFinished,
    CallStarted,
    RunEnded,
    RunRecorder,
    RunStarted,
    SubagentProgress,
    SubagentRun,
    read_back,
)
from toolgate.agent.transcript import MessageEntry, Transcript, load_transcript
from toolgate.agent.transcript_export import ExportedSession, export_markdown
from toolgate.core.messages import ToolUse

WHEN = dt.datetime(2026, 12, 4, 20, 0, tzinfo=dt.UTC)


def _crashed_mid_grandchild(path: Path) -> None:
    """What a kill leaves while a grandchild runs: its steps so far, no end of either run, no Agent result."""
    agent = ToolUse(id="agent-1", name="Agent", input={"description": "look", "subagent_type": "general"})
    transcript = Transcript(path)
    transcript.append(MessageEntry(message=user_text("delegate")))
    transcript.append(MessageEntry(message=ChatMessage(role="assistant", content=[agent])))
    for where, step in [
        (["agent-1"], RunStarted(agent_type="general", description="look")),
        (["agent-1"], CallStarted(id="c-read", name="Read", summary="a.txt")),
        (["agent-1"], CallFinished(id="c-read", result_summary="alpha", is_error=False)),
        (["agent-1"], CallStarted(id="c-agent", name="Agent", summary="explore: dig")),
        (["agent-1", "c-agent"], RunStarted(agent_type="explore", description="dig")),
        (["agent-1", "c-agent"], CallStarted(id="g-wait", name="Bash", summary="sleep 30")),
    ]:
        transcript.record_subagent_progress(SubagentProgress(path=where, step=step))
    transcript.close()


def test_a_run_that_never_ended_reads_back_interrupted_with_its_grandchild_unless_its_call_runs(
    tmp_path: Path,
) -> None:
    _crashed_mid_grandchild(tmp_path / "t.jsonl")
    recorded = load_transcript(tmp_path / "t.jsonl").subagents
    grandchild = recorded["agent-1"].calls[1].subagent
    assert grandchild is not None and [c.id for c in grandchild.calls] == ["g-wait"]
    assert (recorded["agent-1"].stop_reason, grandchild.stop_reason) == (None, None)

    assert read_back(recorded, running={"agent-1"}) == recorded  # it runs right now: nothing to say yet
    ended = read_back(recorded)["agent-1"]
    ended_grandchild = ended.calls[1].subagent
    assert ended_grandchild is not None
    assert (ended.stop_reason, ended_grandchild.stop_reason) == ("interrupted", "interrupted")
    assert ended.calls[0] == recorded["agent-1"].calls[0]  # what it did is kept as it was
    assert recorded["agent-1"].stop_reason is None  # read back as a copy: the loaded record is left as it is


def test_a_run_that_ended_reads_back_as_it_ended() -> None:
    run = SubagentRun(task_id="agent-1", agent_type="explore", description="d", stop_reason="max_turns")
    assert read_back({"agent-1": run}) == {"agent-1": run}


def test_a_step_for_a_run_the_record_does_not_hold_changes_nothing(tmp_path: Path) -> None:
    """A start lost to a crash (a line cut short) leaves later steps of that run nowhere to go."""
    transcript = Transcript(tmp_path / "t.jsonl")
    transcript.record_subagent_progress(SubagentProgress(path=["agent-9"], step=RunEnded(stop_reason="end_turn")))
    transcript.close()
    assert load_transcript(tmp_path / "t.jsonl").subagents == {}


def test_markdown_says_a_run_had_not_ended_and_which_calls_got_no_result(tmp_path: Path) -> None:
    _crashed_mid_grandchild(tmp_path / "t.jsonl")
    loaded = load_transcript(tmp_path / "t.jsonl")
    session = ExportedSession(id="s1", title="t", workspace="/w", created=WHEN, updated=WHEN)
    text = export_markdown(session, loaded.history, loaded.compactions, loaded.subagents)
    not_ended = "had not ended (it was interrupted, or still ran when this was exported)"
    assert text.endswith(
        "- **Agent** `look` — no result was recorded\n\n"
        f"  The `general` subagent {not_ended} (2 calls).\n\n"
        "  - **Read** `a.txt` — alpha\n\n"
        "  - **Agent** `explore: dig` — no result was recorded\n\n"
        f"    The `explore` subagent {not_ended} (1 call).\n\n"
        "    - **Bash** `sleep 30` — no result was recorded\n"
    )


def test_a_child_whose_turn_end_was_not_heard_ends_with_the_reason_its_parent_saw() -> None:
    """A child whose send raised (or was stopped before it began) emitted no turn end: its record still ends."""
    kept: list[SubagentProgress] = []
    failed = RunRecorder("agent-1", "explore", "d", kept.append)
    failed.end("error")
    assert failed.run().stop_reason == "error"
    assert [p.step for p in kept] == [RunStarted(agent_type="explore", description="d")]

    answered = RunRecorder("agent-2", "explore", "d")
    answered.apply(TurnEnd(stop_reason="end_turn", requests=1, usage=Usage()))
    answered.end("interrupted")  # the turn end it heard is how it ended
    assert answered.run().stop_reason == "end_turn"
