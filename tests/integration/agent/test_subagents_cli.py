"""Subagents through `toolgate chat --print` against the mock model: the mock tells a child's requests from its
parent's by the marker in the child's system prompt (Script.lanes)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from tests.integration.agent import test_chat_cli as cli
from tests.integration.agent.test_chat_cli import Chat, anthropic_env

from toolgate.agent.subagent_record import read_back
from toolgate.agent.transcript import load_transcript
from toolgate.mockmodel import MockModelServer
from toolgate.session_files import SessionFiles

# The CLI tests' fixtures, found by pytest under these names: a clean environment, the data dir, the chat
# processes (each killed at the end), and a.txt in the workspace.
env, data_dir, chats, files = cli.env, cli.data_dir, cli.chats, cli.files

EXPLORE = "subagent of type `explore`"
GENERAL = "subagent of type `general`"


def _agent(use_id: str, subagent_type: str, **more: str) -> dict[str, Any]:
    return {
        "id": use_id,
        "name": "Agent",
        "input": {"description": "look around", "prompt": "look around", "subagent_type": subagent_type, **more},
    }


def _run(args: list[str], env: dict[str, str], workspace: Path, data_dir: Path, chats: list[Chat]) -> list[Any]:
    chat = Chat(
        [*args, "--output-format", "stream-json", "--workspace", str(workspace), "--data-dir", str(data_dir)], env
    )
    chats.append(chat)
    code, out, err = chat.finish()
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def _child_events(lines: list[Any], task_id: str, kind: str) -> list[Any]:
    return [
        line["event"]
        for line in lines
        if line["type"] == "subagent" and line["task_id"] == task_id and line["event"]["type"] == kind
    ]


def _tool_result(body: Any, use_id: str) -> Any:
    results = [
        block
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result" and block["tool_use_id"] == use_id
    ]
    assert len(results) == 1, body["messages"]
    return results[0]


def test_an_explore_child_cannot_write_even_under_a_bypass_parent_and_its_reads_answer(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    script = {
        "steps": [{"tool_uses": [_agent("agent-1", "explore")]}, {"text": "The child says alpha."}],
        "lanes": {
            EXPLORE: [
                {
                    "tool_uses": [
                        {
                            "id": "c-edit",
                            "name": "Edit",
                            "input": {"file_path": "a.txt", "old_string": "a", "new_string": "b"},
                        },
                        {"id": "c-bash", "name": "Bash", "input": {"command": "echo owned > b.txt"}},
                        {"id": "c-read", "name": "Read", "input": {"file_path": "a.txt"}},
                    ]
                },
                {"text": "a.txt says alpha"},
            ]
        },
    }
    with MockModelServer(script) as mock:
        lines = _run(
            ["explore", "--permission-mode", "bypassPermissions"], anthropic_env(env, mock), workspace, data_dir, chats
        )
    assert (workspace / "a.txt").read_text() == "alpha\n" and not (workspace / "b.txt").exists()
    finished = {e["tool_use_id"]: e for e in _child_events(lines, "agent-1", "tool_call_finished")}
    assert finished["c-edit"]["is_error"] and "Edit" in finished["c-edit"]["result"]["content"]
    bash = finished["c-bash"]
    assert bash["is_error"] and "read-only subagent (its type only looks)" in bash["result"]["content"]
    assert finished["c-read"]["result"]["content"] == "1\talpha"
    # The child's requests carry its own tools and conversation; the parent's second request gets its answer.
    child_requests = [r for r in mock.requests if r.lane == EXPLORE]
    assert len(child_requests) == 2
    assert sorted(t["name"] for t in child_requests[0].json["tools"]) == ["Bash", "Glob", "Grep", "Read"]
    assert child_requests[0].json["messages"][0]["content"][0]["text"] == "look around"
    parent_last = next(r for r in reversed(mock.requests) if r.lane is None)
    assert _tool_result(parent_last.json, "agent-1")["content"] == "a.txt says alpha"
    # The child's usage is the session's: the turn's total counts all four requests' output tokens.
    [turn_end] = [line for line in lines if line["type"] == "turn_end"]
    child_turn_ends = _child_events(lines, "agent-1", "turn_end")
    assert turn_end["usage"]["output_tokens"] > child_turn_ends[0]["usage"]["output_tokens"] > 0


def test_a_plan_mode_parents_general_child_cannot_write(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    script = {
        "steps": [{"tool_uses": [_agent("agent-1", "general", model="small-model")]}, {"text": "It could not."}],
        "lanes": {
            GENERAL: [
                {"tool_uses": [{"id": "c-write", "name": "Write", "input": {"file_path": "b.txt", "content": "x\n"}}]},
                {"text": "Writing was refused."},
            ]
        },
    }
    with MockModelServer(script) as mock:
        lines = _run(["write b", "--permission-mode", "plan"], anthropic_env(env, mock), workspace, data_dir, chats)
        child_request = next(r for r in mock.requests if r.lane == GENERAL)
        child_tools = {t["name"] for t in child_request.json["tools"]}
    assert child_request.json["model"] == "small-model" and mock.requests[0].json["model"] != "small-model"
    assert not (workspace / "b.txt").exists()
    assert "Write" in child_tools and "Agent" not in child_tools  # the parent's tools, but depth 1
    [write] = _child_events(lines, "agent-1", "tool_call_finished")
    assert write["is_error"] and "its parent is in plan (read-only) mode" in write["result"]["content"]


def test_an_interrupt_mid_child_answers_every_tool_use(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    script = {
        "steps": [{"tool_uses": [_agent("agent-1", "explore")]}, {"text": "Resumed."}],
        "lanes": {EXPLORE: [{"tool_uses": [{"id": "c-wait", "name": "Bash", "input": {"command": "sleep 30"}}]}]},
    }
    with MockModelServer(script) as mock:
        run_env = anthropic_env(env, mock)
        args = ["--output-format", "stream-json", "--workspace", str(workspace), "--data-dir", str(data_dir)]
        chat = Chat(["explore", *args], run_env)
        chats.append(chat)
        seen: list[Any] = []
        for line in chat.lines():
            seen.append(line)
            event = line.get("event", {})
            if line["type"] == "subagent" and event.get("type") == "tool_call_started":
                chat.kill(signal.SIGINT)  # the child's sleep is running
                break
        code, out, err = chat.finish()
        seen += [json.loads(line) for line in out.splitlines()]
        assert code == 130, err
        session_id = seen[0]["session_id"]
        # The child's conversation got the stopped call's result; the parent's Agent call got its own.
        child_messages = [e["message"] for e in _child_events(seen, "agent-1", "message")]
        assert any(
            b.get("tool_use_id") == "c-wait" for m in child_messages if m["role"] == "user" for b in m["content"]
        )
        resumed = _run(["go on", "--resume", session_id], run_env, workspace, data_dir, chats)
    assert resumed[-1]["text"] == "Resumed."
    last = mock.requests[-1]
    assert last.status == 200 and last.rejection is None and last.lane is None
    assert _tool_result(last.json, "agent-1")["is_error"] is True


def test_a_child_killed_mid_run_leaves_its_record_up_to_its_last_step_and_reads_back_interrupted(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    """SIGKILL: nothing of the process runs after it, so the record is what was written as the child went."""
    script = {
        "steps": [{"tool_uses": [_agent("agent-1", "explore")]}],
        "lanes": {
            EXPLORE: [
                {
                    "text": "Reading first.",
                    "tool_uses": [{"id": "c-read", "name": "Read", "input": {"file_path": "a.txt"}}],
                },
                {"tool_uses": [{"id": "c-wait", "name": "Bash", "input": {"command": "sleep 30"}}]},
            ]
        },
    }
    with MockModelServer(script) as mock:
        args = ["--output-format", "stream-json", "--workspace", str(workspace), "--data-dir", str(data_dir)]
        chat = Chat(["explore", *args], anthropic_env(env, mock))
        chats.append(chat)
        session_id = ""
        for line in chat.lines():
            session_id = session_id or line.get("session_id", "")
            event = line.get("event", {})
            if (
                line["type"] == "subagent"
                and event.get("type") == "tool_call_started"
                and event["tool_use_id"] == "c-wait"
            ):
                chat.kill()  # SIGKILL, while the child's sleep runs
                break
        chat.finish()

    loaded = load_transcript(SessionFiles(data_dir).transcript_path(session_id))
    run = loaded.subagents["agent-1"]
    assert (run.agent_type, run.description, run.stop_reason, run.answer) == ("explore", "look around", None, "")
    read, wait = run.calls
    assert (read.id, read.is_error) == ("c-read", False) and read.result_summary is not None
    assert (wait.id, wait.name, wait.result_summary) == ("c-wait", "Bash", None)  # it never got a result
    # Read back once nothing runs, the child was interrupted; its calls are kept as they were.
    [interrupted] = read_back(loaded.subagents).values()
    assert interrupted.stop_reason == "interrupted" and interrupted.calls == run.calls


def test_two_explore_children_in_one_batch_run_at_the_same_time(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    slow = {"text": "found it in a.txt", "chunk_chars": 2, "delay": 0.05}
    script = {
        "steps": [{"tool_uses": [_agent("agent-1", "explore"), _agent("agent-2", "explore")]}, {"text": "Both done."}],
        "lanes": {EXPLORE: [slow, slow]},
    }
    with MockModelServer(script) as mock:
        _run(["two at once"], anthropic_env(env, mock), workspace, data_dir, chats)
        first, second = [r for r in mock.requests if r.lane == EXPLORE]
    assert first.finished_at is not None and second.finished_at is not None
    assert first.received_at < second.finished_at and second.received_at < first.finished_at
