"""MCP tools in chat sessions: `toolgate chat --print` and the editor's sessions, against the mock model.

Real parts throughout: the chat CLI and the sidecar as subprocesses, the provider SDK talking HTTP to the
mock model on 127.0.0.1, the SDK-written edge server as the MCP server. The edge server writes its pid to a
file, so the tests can see when it started and that it is gone afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from tests.integration.sidecar_client import REAL_SERVER, SidecarClient, initialize, start_client, stop_client

from toolgate.mockmodel import MockModelServer
from toolgate.sidecar import protocol as p
from toolgate.sidecar import protocol_mcp as m

from .conftest import McpSetup

ECHO = {"name": "mcp__edge__echo", "input": {"text": "hello from the edge"}}


def chat(setup: McpSetup, mock: MockModelServer, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    env = {**setup.environ, "ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_API_KEY": "test-key"}
    args = ["--workspace", str(setup.workspace), "--data-dir", str(setup.data), "--output-format", "stream-json"]
    process = subprocess.run(
        [sys.executable, "-m", "toolgate", "chat", "--print", "echo something", *args, *extra],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )
    return process.returncode, [json.loads(line) for line in process.stdout.splitlines()], process.stderr


def tool_definitions(mock: MockModelServer) -> list[str]:
    """The first request's tool definitions, each as the bytes the SDK sent, without the cache breakpoint (which
    marks the last tool, whichever it is)."""
    tools = mock.requests[0].json["tools"]
    return [json.dumps({k: v for k, v in tool.items() if k != "cache_control"}, sort_keys=True) for tool in tools]


def test_chat_print_offers_an_approved_servers_tools_after_the_builtins_and_stops_the_server(
    mcp_setup: McpSetup, alive: Callable[[int], bool]
) -> None:
    with MockModelServer([{"text": "Plain."}]) as mock:
        code, _, err = chat(mcp_setup, mock)  # no server configured yet
        assert code == 0, err
        builtins = tool_definitions(mock)

    mcp_setup.user_servers({"edge": mcp_setup.edge()})
    mcp_setup.approve("edge")
    with MockModelServer([{"tool_uses": [ECHO]}, {"text": "Echoed."}]) as mock:
        code, lines, err = chat(mcp_setup, mock, "--allow", "mcp__edge__echo")
        assert code == 0, err
        sent = tool_definitions(mock)
    # The built-ins go out byte for byte as before (the prompt-cache prefix); the server's tools follow, sorted.
    assert sent[: len(builtins)] == builtins
    added = [json.loads(tool)["name"] for tool in sent[len(builtins) :]]
    assert "mcp__edge__echo" in added and added == sorted(added)
    [finished] = [line for line in lines if line["type"] == "tool_call_finished"]
    assert finished["name"] == "mcp__edge__echo" and not finished["is_error"]
    assert finished["result"]["content"] == "hello from the edge"
    assert lines[-1]["text"] == "Echoed."
    [pid] = mcp_setup.started_pids()
    assert not alive(pid), "the MCP server outlived the chat"


def test_chat_print_without_approval_starts_nothing_and_says_why(mcp_setup: McpSetup) -> None:
    mcp_setup.user_servers({"edge": mcp_setup.edge()})
    with MockModelServer([{"text": "Plain."}]) as mock:
        code, _, err = chat(mcp_setup, mock)
        assert code == 0, err
        names = [json.loads(tool)["name"] for tool in tool_definitions(mock)]
    assert not any(name.startswith("mcp__") for name in names)
    assert mcp_setup.started_pids() == []
    assert "MCP server 'edge' is needs-approval" in err and "toolgate mcp approve edge" in err


@pytest.fixture
async def sidecar_with_edge(mcp_setup: McpSetup) -> AsyncIterator[SidecarClient]:
    """The real sidecar (`toolgate serve`) whose user settings name the edge server, approved."""
    mcp_setup.user_servers({"edge": mcp_setup.edge()})
    storage = mcp_setup.root / "storage"
    mcp_setup.approve("edge", mcp_setup.default_data)  # the sidecar reads the CLI's approvals, the data root's
    client = await start_client(REAL_SERVER, env=mcp_setup.environ)
    try:
        await initialize(client, storage, mcp_setup.workspace)
        yield client
    finally:
        await stop_client(client)


async def allow(params: dict[str, Any]) -> dict[str, Any]:
    return {"decision": "allow"}


async def test_an_editor_session_starts_its_servers_with_the_first_message_and_stops_them_with_the_session(
    sidecar_with_edge: SidecarClient, mcp_setup: McpSetup, alive: Callable[[int], bool]
) -> None:
    sidecar = sidecar_with_edge
    with MockModelServer([{"tool_uses": [ECHO]}, {"text": "Echoed."}]) as mock:
        await sidecar.call(
            p.PROVIDER_CONFIGURE, {"provider": "anthropic", "baseUrl": mock.url, "apiKey": "k", "model": "m"}
        )
        session_id = await sidecar.new_session(mcp_setup.workspace)
        assert mcp_setup.started_pids() == [], "the server started before the session's first message"
        sidecar.answer_approval = allow
        result = await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "echo it"})
        assert result == {"stopReason": "end_turn"}
    [asked] = sidecar.approvals  # the same ladder: not read-only on the server's word, so the person is asked
    assert asked["toolName"] == "mcp__edge__echo"
    [finished] = [e["event"] for e in sidecar.chat_events if e["event"]["type"] == "tool_call_finished"]
    assert finished["result"]["content"] == "hello from the edge" and not finished["is_error"]
    [pid] = mcp_setup.started_pids()
    assert alive(pid)
    await sidecar.call(p.SESSION_DELETE, {"sessionId": session_id})
    assert not alive(pid), "the MCP server outlived its session"


async def test_closing_the_sidecar_stops_every_sessions_servers(
    sidecar_with_edge: SidecarClient, mcp_setup: McpSetup, alive: Callable[[int], bool]
) -> None:
    sidecar = sidecar_with_edge
    with MockModelServer([{"text": "One."}, {"text": "Two."}]) as mock:
        await sidecar.call(
            p.PROVIDER_CONFIGURE, {"provider": "anthropic", "baseUrl": mock.url, "apiKey": "k", "model": "m"}
        )
        for _ in range(2):
            session_id = await sidecar.new_session(mcp_setup.workspace)
            await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "hi"})
        tools = [t["name"] for t in mock.requests[1].json["tools"]]
    assert "mcp__edge__echo" in tools
    pids = mcp_setup.started_pids()
    assert len(pids) == 2 and all(alive(pid) for pid in pids)
    await stop_client(sidecar)
    assert not any(alive(pid) for pid in pids), "an MCP server outlived the sidecar"


async def test_a_tool_list_change_mid_turn_reaches_the_editor_before_the_turn_ends(
    sidecar_with_edge: SidecarClient, mcp_setup: McpSetup
) -> None:
    sidecar = sidecar_with_edge
    pushed: list[tuple[dict[str, Any], list[str]]] = []  # each notification, and the chat events before it

    @sidecar.feature(m.MCP_CHANGED)
    def mcp_changed(params: dict[str, Any]) -> None:
        pushed.append((params, [e["event"]["type"] for e in sidecar.chat_events]))
        sidecar._changed.set()

    def edge_changed() -> bool:
        return any(s["name"] == "edge" and s["state"] == "changed" for params, _ in pushed for s in params["servers"])

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        if params["toolName"] == "Bash":  # the turn goes on only once the change was pushed: no race with its end
            await sidecar.wait_for(edge_changed)
        return {"decision": "allow"}

    mutate = {"name": "mcp__edge__mutate", "input": {}}
    touch = {"name": "Bash", "input": {"command": "touch after-the-change"}}
    script = [{"tool_uses": [mutate]}, {"tool_uses": [touch]}, {"text": "Done."}]
    with MockModelServer(script) as mock:
        await sidecar.call(
            p.PROVIDER_CONFIGURE, {"provider": "anthropic", "baseUrl": mock.url, "apiKey": "k", "model": "m"}
        )
        session_id = await sidecar.new_session(mcp_setup.workspace)
        await sidecar.call(m.MCP_SERVERS_LIST, {"sessionId": session_id})  # what the editor does on opening it
        sidecar.answer_approval = answer
        result = await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "change your tools"})
        assert result == {"stopReason": "end_turn"}
    params, events_before = next((params, before) for params, before in pushed if edge_changed())
    assert params["sessionId"] == session_id and "turn_end" not in events_before
    [edge] = [s for s in params["servers"] if s["name"] == "edge"]
    assert edge["changedTools"] == ["echo"] and "id_rsa" in edge["diff"]
    assert (mcp_setup.workspace / "after-the-change").exists()
