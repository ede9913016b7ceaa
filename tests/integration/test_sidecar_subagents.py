"""Subagents in the editor, over real JSON-RPC: a child's approval reaches the client naming the child (its task id,
type and description), answering it lets the child go on, an interrupt while it waits stops the child and leaves no
dangling tool_use, and the child's requests count into the session's usage meter. The mock model tells the child's
requests from its parent's by the marker in the child's system prompt (its lanes)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.integration import test_sidecar_chat as chat_tests
from tests.integration.sidecar_client import SidecarClient
from tests.integration.test_sidecar_chat import configure, events_of

from toolgate.mockmodel import MockModelServer
from toolgate.session_files import SessionFiles
from toolgate.sidecar import protocol as p
from toolgate.sidecar import protocol_sessions as ps

# The chat tests' fixture, found by pytest under this name: the mock models a test starts, stopped at its end.
mock_model = chat_tests.mock_model

GENERAL = "subagent of type `general`"
AGENT = {
    "id": "agent-1",
    "name": "Agent",
    "input": {"description": "open the gate", "prompt": "open the gate labelled x", "subagent_type": "general"},
}
CHILD_GATE = {"id": "child-gate", "name": "Gate", "input": {"label": "x"}}


def child_events(client: SidecarClient, kind: str) -> list[dict[str, Any]]:
    return [
        e["event"]
        for e in events_of(client)
        if e["type"] == "subagent" and e["task_id"] == "agent-1" and e["event"]["type"] == kind
    ]


def start(servers: list[MockModelServer], script: dict[str, Any]) -> MockModelServer:
    server = MockModelServer(script).start()
    servers.append(server)
    return server


def tool_results(body: dict[str, Any]) -> dict[str, Any]:
    return {
        block["tool_use_id"]: block
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }


async def test_a_childs_approval_names_the_child_and_the_answer_lets_it_go_on(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    script = {
        "steps": [{"tool_uses": [AGENT]}, {"text": "The gate is open."}],
        "lanes": {GENERAL: [{"tool_uses": [CHILD_GATE]}, {"text": "gate x opened"}]},
    }
    mock = start(mock_model, script)
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)

    async def allow(params: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "allow"}

    sidecar.answer_approval = allow
    assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "open it"}))["stopReason"] == "end_turn"

    [asked] = sidecar.approvals
    assert asked["toolUseId"] == "child-gate" and asked["toolName"] == "Gate"
    assert asked["subagent"] == {"taskId": "agent-1", "agentType": "general", "description": "open the gate"}
    assert asked["summary"] and "general" not in asked["summary"]  # the call's own line; the child is named apart
    [finished] = child_events(sidecar, "tool_call_finished")
    assert finished["tool_use_id"] == "child-gate" and not finished["is_error"]
    assert finished["result"]["content"] == "gate x passed"
    parent_last = mock.requests[-1]
    assert parent_last.lane is None and tool_results(parent_last.json)["agent-1"]["content"] == "gate x opened"


async def test_an_interrupt_while_a_child_waits_for_approval_stops_it_and_answers_every_tool_use(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    script = {
        "steps": [{"tool_uses": [AGENT]}, {"text": "Fresh start."}],
        "lanes": {GENERAL: [{"tool_uses": [CHILD_GATE]}]},
    }
    mock = start(mock_model, script)
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    withdrawn = asyncio.Event()

    async def never(params: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            withdrawn.set()  # the sidecar sent $/cancelRequest for this question
            raise
        raise AssertionError("unreachable")

    sidecar.answer_approval = never
    sending = asyncio.ensure_future(sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "open it"}))
    await sidecar.wait_for(lambda: len(sidecar.approvals) == 1)
    assert sidecar.approvals[0]["subagent"]["taskId"] == "agent-1"

    assert (await sidecar.call(p.CHAT_INTERRUPT, {"sessionId": session_id})) == {"interrupted": True}
    assert (await sending)["stopReason"] == "interrupted"
    async with asyncio.timeout(20):
        await withdrawn.wait()
    [child_end] = child_events(sidecar, "turn_end")
    assert child_end["stop_reason"] == "interrupted"
    # The child's waiting call got its result in the child's conversation ...
    [stopped] = [
        block
        for event in child_events(sidecar, "message")
        if event["message"]["role"] == "user"
        for block in event["message"]["content"]
        if block.get("tool_use_id") == "child-gate"
    ]
    assert stopped["is_error"] and "waiting for the user's approval" in str(stopped["content"])

    # ... and the parent's Agent call its own: the next request passes the mock's strict pairing check.
    assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "again"}))["stopReason"] == "end_turn"
    last = mock.requests[-1]
    assert last.status == 200 and last.rejection is None and last.lane is None
    assert tool_results(last.json)["agent-1"]["is_error"] is True


async def test_the_childs_requests_count_into_the_sessions_usage_meter(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    script = {
        "steps": [{"tool_uses": [AGENT]}, {"text": "Done, and the meter knows."}],
        "lanes": {GENERAL: [{"text": "a long answer from the child " * 20}]},
    }
    mock = start(mock_model, script)
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "delegate"})

    own = [e for e in events_of(sidecar) if e["type"] == "usage"]
    [childs] = child_events(sidecar, "usage")
    assert len(own) == 3 and childs["usage"]["output_tokens"] > 0
    first, reading, last = own
    # The meter moved while the child worked: its request counted, the parent's last request and context kept.
    assert (reading["usage"], reading["context_tokens"]) == (first["usage"], first["context_tokens"])
    for field in ("input_tokens", "output_tokens"):
        assert reading["total_usage"][field] == first["usage"][field] + childs["usage"][field]
        # The last reading counts every request of the session: the parent's two and the child's one.
        assert last["total_usage"][field] == first["usage"][field] + childs["usage"][field] + last["usage"][field]


async def test_chat_history_returns_what_the_child_did_for_its_agent_card(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    script = {
        "steps": [{"tool_uses": [AGENT]}, {"text": "The gate is open."}],
        "lanes": {GENERAL: [{"tool_uses": [CHILD_GATE]}, {"text": "gate x opened"}]},
    }
    mock = start(mock_model, script)
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)

    async def allow(params: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "allow"}

    sidecar.answer_approval = allow
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "open it"})
    [started] = child_events(sidecar, "tool_call_started")
    [finished] = child_events(sidecar, "tool_call_finished")

    history = await sidecar.call(p.CHAT_HISTORY, {"sessionId": session_id})
    assert history["subagents"] == {
        "agent-1": {
            "task_id": "agent-1",
            "agent_type": "general",
            "description": "open the gate",
            # The lines the card showed live: the call's summary and its result's first line.
            "calls": [
                {
                    "id": "child-gate",
                    "name": "Gate",
                    "summary": started["summary"],
                    "result_summary": finished["summary"],
                    "is_error": False,
                    "subagent": None,
                }
            ],
            "stop_reason": "end_turn",
            "answer": "gate x opened",
        }
    }


async def test_chat_history_draws_a_child_running_as_running_and_one_that_never_ended_as_interrupted(
    sidecar: SidecarClient, workspace: Path, storage: Path, mock_model: list[MockModelServer]
) -> None:
    script = {
        "steps": [{"tool_uses": [AGENT]}, {"text": "Stopped."}],
        "lanes": {GENERAL: [{"tool_uses": [CHILD_GATE]}]},
    }
    mock = start(mock_model, script)
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)

    async def never(params: dict[str, Any]) -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    sidecar.answer_approval = never
    sending = asyncio.ensure_future(sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "open it"}))
    await sidecar.wait_for(lambda: len(sidecar.approvals) == 1)

    # While the child waits for the person, its record is on disk already, and it runs.
    history = await sidecar.call(p.CHAT_HISTORY, {"sessionId": session_id})
    assert history["busy"] is True
    running = history["subagents"]["agent-1"]
    assert (running["stop_reason"], [c["id"] for c in running["calls"]]) == (None, ["child-gate"])
    assert running["calls"][0]["result_summary"] is None

    # The same transcript in a session that runs nothing (what a crash leaves): the child was interrupted.
    files = SessionFiles(storage)
    crashed = await sidecar.new_session(workspace)
    files.transcript_path(crashed).write_bytes(files.transcript_path(session_id).read_bytes())
    reopened = await sidecar.call(p.CHAT_HISTORY, {"sessionId": crashed})
    assert reopened["busy"] is False
    assert reopened["subagents"]["agent-1"] == {**running, "stop_reason": "interrupted"}
    # Its exports tell what it did too, nested under the Agent call that started it.
    markdown = (await sidecar.call(ps.SESSION_EXPORT, {"sessionId": crashed, "format": "markdown"}))["content"]
    assert "- **Agent** `open the gate` — no result was recorded\n\n  The `general` subagent had not ended" in markdown
    assert f"  - **Gate** `{running['calls'][0]['summary']}` — no result was recorded\n" in markdown
    exported = await sidecar.call(ps.SESSION_EXPORT, {"sessionId": crashed, "format": "json"})
    assert json.loads(exported["content"])["subagents"] == {"agent-1": running}  # as recorded: it never ended

    assert (await sidecar.call(p.CHAT_INTERRUPT, {"sessionId": session_id})) == {"interrupted": True}
    assert (await sending)["stopReason"] == "interrupted"
