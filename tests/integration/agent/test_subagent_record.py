"""A child agent's run is recorded in its parent's transcript as it goes and once more when it ends, so a reopened
session can draw its Agent card again and an export can tell it: its calls with their summaries and results' first
lines, how it stopped, its answer, and a grandchild's run inside the call that started it. Real chats against the mock
model (parent and children in lanes)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from pydantic import SecretStr

from toolgate.agent.loop import AgentChat
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.subagent_record import SubagentRun
from toolgate.agent.subagent_scope import SubagentSettings
from toolgate.agent.subagents import attach_subagents
from toolgate.agent.transcript import Transcript, load_transcript
from toolgate.agent.transcript_export import ExportedSession, export_json, export_markdown
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.mockmodel import MockModelServer
from toolgate.runtime import RuntimeOptions, build_runtime

GENERAL = "subagent of type `general`"
EXPLORE = "subagent of type `explore`"


def _agent(use_id: str, subagent_type: str, description: str) -> dict[str, object]:
    task = {"description": description, "prompt": description, "subagent_type": subagent_type}
    return {"id": use_id, "name": "Agent", "input": task}


async def _delegate(script: dict[str, object], workspace: Path, path: Path, max_depth: int) -> None:
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.DEFAULT))
    with MockModelServer(script) as mock:
        config = ModelConfig(provider="anthropic", model="m", api_key=SecretStr("k"), base_url=mock.url)
        chat = AgentChat(runtime, make_provider(config), transcript=Transcript(path))
        attach_subagents(chat, SubagentSettings(max_depth=max_depth))
        assert await chat.send("delegate") == "end_turn"
        await chat.aclose()


async def test_a_childs_run_and_its_grandchilds_are_read_back_from_the_transcript(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    script = {
        "steps": [{"tool_uses": [_agent("agent-1", "general", "look around")]}, {"text": "Looked."}],
        "lanes": {
            GENERAL: [
                {"tool_uses": [{"id": "c-read", "name": "Read", "input": {"file_path": "a.txt"}}]},
                {"tool_uses": [_agent("c-agent", "explore", "read it again")]},
                {"text": "a.txt starts with alpha"},
            ],
            EXPLORE: [
                {"tool_uses": [{"id": "g-glob", "name": "Glob", "input": {"pattern": "*.txt"}}]},
                {"text": "one text file"},
            ],
        },
    }
    path = tmp_path / "transcript.jsonl"
    await _delegate(script, workspace, path, max_depth=2)

    loaded = load_transcript(path)
    assert list(loaded.subagents) == ["agent-1"]
    run = loaded.subagents["agent-1"]
    assert (run.agent_type, run.description, run.stop_reason, run.answer) == (
        "general",
        "look around",
        "end_turn",
        "a.txt starts with alpha",
    )
    read, delegated = run.calls
    assert (read.id, read.name, read.is_error, read.subagent) == ("c-read", "Read", False, None)
    assert "a.txt" in read.summary and read.result_summary is not None and "alpha" in read.result_summary
    assert (delegated.id, delegated.name, delegated.result_summary) == ("c-agent", "Agent", "one text file")
    grandchild = delegated.subagent
    assert grandchild is not None
    named = (grandchild.task_id, grandchild.agent_type, grandchild.description)
    assert named == ("c-agent", "explore", "read it again")
    assert (grandchild.stop_reason, grandchild.answer) == ("end_turn", "one text file")
    [glob] = grandchild.calls
    assert (glob.id, glob.name, glob.result_summary) == ("g-glob", "Glob", "a.txt")


async def test_a_transcript_without_subagent_records_loads_as_before(tmp_path: Path, workspace: Path) -> None:
    """Older transcripts have no subagent entries: the card then shows the Agent call's own result."""
    path = tmp_path / "transcript.jsonl"
    await _delegate({"steps": [{"text": "Nothing to delegate."}]}, workspace, path, max_depth=1)
    loaded = load_transcript(path)
    assert loaded.subagents == {} and [m.role for m in loaded.history] == ["user", "assistant"]


def test_an_unfinished_childs_record_says_it_never_ended(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    transcript.record_subagent(SubagentRun(task_id="agent-1", agent_type="explore", description="d"))
    transcript.close()
    [run] = load_transcript(path).subagents.values()
    assert run.stop_reason is None and run.calls == [] and run.answer == ""


SECRET = "sk-ant-" + "k" * 30


async def _delegated_with_a_grandchild(tmp_path: Path, workspace: Path) -> Path:
    """A transcript where a child reads a secret (its result is redacted) and starts a grandchild."""
    (workspace / "config.txt").write_text(f"token={SECRET}\n")
    script = {
        "steps": [{"tool_uses": [_agent("agent-1", "general", "look around")]}, {"text": "Looked."}],
        "lanes": {
            GENERAL: [
                {"tool_uses": [{"id": "c-cat", "name": "Bash", "input": {"command": "cat config.txt"}}]},
                {"tool_uses": [_agent("c-agent", "explore", "read it again")]},
                {"text": "config.txt holds a token\n\nand nothing else"},
            ],
            EXPLORE: [
                {"tool_uses": [{"id": "g-glob", "name": "Glob", "input": {"pattern": "*.txt"}}]},
                {"text": "one text file"},
            ],
        },
    }
    path = tmp_path / "transcript.jsonl"
    await _delegate(script, workspace, path, max_depth=2)
    return path


async def test_the_steps_recorded_as_the_child_went_read_back_as_the_run_recorded_at_its_end(
    tmp_path: Path, workspace: Path
) -> None:
    path = await _delegated_with_a_grandchild(tmp_path, workspace)
    lines = path.read_bytes().splitlines(keepends=True)
    whole = [line for line in lines if json.loads(line)["type"] == "subagent"]
    assert len(whole) == 1  # the end record: one, for the child (its grandchild's run is inside it)
    steps_only = tmp_path / "steps-only.jsonl"
    steps_only.write_bytes(b"".join(line for line in lines if line not in whole))

    recorded = load_transcript(path).subagents["agent-1"]
    assert load_transcript(steps_only).subagents == {"agent-1": recorded}
    grandchild = recorded.calls[1].subagent
    assert grandchild is not None and (grandchild.stop_reason, grandchild.answer) == ("end_turn", "one text file")


async def test_exports_nest_each_childs_run_under_its_agent_call_with_secrets_redacted(
    tmp_path: Path, workspace: Path
) -> None:
    loaded = load_transcript(await _delegated_with_a_grandchild(tmp_path, workspace))
    when = dt.datetime(2026, 12, 4, 20, 0, tzinfo=dt.UTC)
    session = ExportedSession(id="s1", title="t", workspace=str(workspace), created=when, updated=when)

    markdown = export_markdown(session, loaded.history, loaded.compactions, loaded.subagents)
    nested = (
        "- **Agent** `look around` — config.txt holds a token\n\n"
        "  The `general` subagent answered (2 calls).\n\n"
        "  - **Bash** `cat config.txt` — token=[REDACTED Anthropic API key]\n\n"
        "  - **Agent** `explore: read it again` — one text file\n\n"
        "    The `explore` subagent answered (1 call).\n\n"
        "    - **Glob** `*.txt` — config.txt\n\n"
        "    Its answer:\n\n"
        "    > one text file\n\n"
        "  Its answer:\n\n"
        "  > config.txt holds a token\n"
        "  >\n"
        "  > and nothing else\n\n"
        "Looked.\n"
    )
    assert markdown.endswith(nested)

    document = json.loads(export_json(session, loaded.history, loaded.compactions, loaded.subagents))
    assert document["subagents"] == {"agent-1": loaded.subagents["agent-1"].model_dump(mode="json")}
    [child_cat, child_agent] = document["subagents"]["agent-1"]["calls"]
    assert child_cat["result_summary"] == "token=[REDACTED Anthropic API key]"
    assert child_agent["subagent"]["calls"][0]["name"] == "Glob"
    assert SECRET not in markdown and SECRET not in json.dumps(document)
