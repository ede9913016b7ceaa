"""Chat over the sidecar: the real server, the real SDK, the mock model over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from tests.integration.sidecar_client import TEST_SERVER, SidecarClient, initialize, start_client, stop_client
from tests.integration.test_sidecar_approvals import always_allow

from toolgate.mockmodel import MockModelServer
from toolgate.mockmodel.sessions import long_session, write_long_session_files
from toolgate.sidecar import protocol as p


@pytest.fixture
def mock_model() -> Iterator[list[MockModelServer]]:
    servers: list[MockModelServer] = []
    yield servers
    for server in servers:
        server.stop()


def start_mock(servers: list[MockModelServer], steps: list[dict[str, Any]]) -> MockModelServer:
    server = MockModelServer(steps).start()
    servers.append(server)
    return server


def events_of(client: SidecarClient) -> list[dict[str, Any]]:
    return [e["event"] for e in client.chat_events]


async def configure(client: SidecarClient, mock: MockModelServer) -> dict[str, Any]:
    return dict(
        await client.call(
            p.PROVIDER_CONFIGURE,
            {"provider": "anthropic", "baseUrl": mock.url, "apiKey": "test-key", "model": "mock-model"},
        )
    )


async def test_provider_status_explains_a_missing_key(sidecar: SidecarClient) -> None:
    status = await sidecar.call(p.PROVIDER_CONFIGURE, {"provider": "openai", "model": "m"})
    if not status["hasKey"]:
        assert "Set API Key" in status["message"]
    status = await sidecar.call(p.PROVIDER_STATUS, {})
    assert status["provider"] == "openai" and status["model"] == "m"
    assert "apiKey" not in status  # the key never travels back


async def test_a_chat_turn_with_a_tool_call_streams_events_and_keeps_history(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    mock = start_mock(
        mock_model,
        [
            {"text": "Let me look.", "tool_uses": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
            {"text": "It says to remember the milk."},
        ],
    )
    status = await configure(sidecar, mock)
    assert status["hasKey"] and status["model"] == "mock-model"
    session_id = await sidecar.new_session(workspace)

    result = await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "What do my notes say?"})
    assert result == {"stopReason": "end_turn"}

    events = events_of(sidecar)
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message" and kinds[1] == "request_started" and kinds[-1] == "turn_end"
    assert events[0]["message"] == {"role": "user", "content": [{"type": "text", "text": "What do my notes say?"}]}
    assert (
        "".join(e["text"] for e in events if e["type"] == "text_delta") == "Let me look.It says to remember the milk."
    )
    [started] = [e for e in events if e["type"] == "tool_call_started"]
    [finished] = [e for e in events if e["type"] == "tool_call_finished"]
    assert started["name"] == "Read" and finished["tool_use_id"] == started["tool_use_id"]
    assert finished["result"]["content"] == "1\tremember the milk" and not finished["is_error"]
    assert all(e["sessionId"] == session_id for e in sidecar.chat_events)

    # The second request carried the tool result back, paired with its call.
    second = mock.requests[1].json["messages"]
    assert second[-1]["content"][0]["type"] == "tool_result"

    history = await sidecar.call(p.CHAT_HISTORY, {"sessionId": session_id})
    assert [m["role"] for m in history["messages"]] == ["user", "assistant", "user", "assistant"]
    assert history["busy"] is False


async def test_approvals_in_a_chat_reach_the_client(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(
        mock_model,
        [{"tool_uses": [{"name": "Gate", "input": {"label": "x"}}]}, {"text": "Done."}],
    )
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)

    async def deny(params: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "deny", "feedback": "not today"}

    sidecar.answer_approval = deny
    assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "open the gate"}))[
        "stopReason"
    ] == "end_turn"
    [asked] = sidecar.approvals
    assert asked["toolName"] == "Gate" and asked["sessionId"] == session_id
    sent_back = mock.requests[1].json["messages"][-1]["content"][0]
    assert sent_back["is_error"] and "not today" in str(sent_back["content"])


async def test_interrupt_while_streaming_leaves_a_valid_conversation(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"text": "Thinking very hard", "hang": True}, {"text": "Fresh answer."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    sending = asyncio.ensure_future(sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "go"}))
    await sidecar.wait_for(lambda: any(e["type"] == "text_delta" for e in events_of(sidecar)))

    with pytest.raises(JsonRpcException, match="still being answered"):
        await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "again"})

    assert (await sidecar.call(p.CHAT_INTERRUPT, {"sessionId": session_id})) == {"interrupted": True}
    assert (await sending)["stopReason"] == "interrupted"
    assert (await sidecar.call(p.CHAT_INTERRUPT, {"sessionId": session_id})) == {"interrupted": False}

    # The next message is accepted by the mock's strict pairing check.
    assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "try again"}))["stopReason"] == "end_turn"
    assert len(mock.requests) == 2


async def test_cancelling_a_send_request_interrupts_it_and_still_answers(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"text": "Long", "hang": True}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    sending = asyncio.create_task(
        sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "go"}, msg_id="long-chat")
    )
    await sidecar.wait_for(lambda: any(e["type"] == "text_delta" for e in events_of(sidecar)))
    sidecar.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="long-chat"))
    assert (await sending) == {"stopReason": "interrupted"}
    [end] = [e for e in events_of(sidecar) if e["type"] == "turn_end"]
    assert end["stop_reason"] == "interrupted"


async def test_chat_on_an_unknown_session_is_invalid_params(sidecar: SidecarClient) -> None:
    with pytest.raises(JsonRpcException, match="no session"):
        await sidecar.call(p.CHAT_SEND, {"sessionId": "nope", "text": "hi"})
    with pytest.raises(JsonRpcException, match="text"):
        await sidecar.call(p.CHAT_SEND, {"sessionId": "nope", "text": ""})


async def test_live_output_of_a_chat_call_is_reported_once_as_a_chat_event(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(
        mock_model,
        [{"tool_uses": [{"name": "Bash", "input": {"command": "echo live-line"}}]}, {"text": "Done."}],
    )
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "run it"}))["stopReason"] == "end_turn"
    progress = [e for e in events_of(sidecar) if e["type"] == "tool_call_progress"]
    assert any("live-line" in e["text"] for e in progress)
    assert sidecar.progress_events == []  # not also sent as toolgate/tools/progress


async def history_in_a_new_sidecar(storage: Path, workspace: Path, session_id: str) -> dict[str, Any]:
    """The session's history as a second sidecar over the same storage reads it: from the transcript alone."""
    second = await start_client(TEST_SERVER)
    try:
        await initialize(second, storage, workspace)
        await second.call(p.SESSION_LOAD, {"sessionId": session_id})
        return dict(await second.call(p.CHAT_HISTORY, {"sessionId": session_id}))
    finally:
        await stop_client(second)


async def test_history_of_a_reopened_session_comes_from_its_transcript(
    sidecar: SidecarClient, storage: Path, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"text": "Hello there."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "hi"})

    history = await history_in_a_new_sidecar(storage, workspace, session_id)
    assert [(m["role"], m["content"][0]["text"]) for m in history["messages"]] == [
        ("user", "hi"),
        ("assistant", "Hello there."),
    ]
    assert history["busy"] is False and history["todos"] == []


async def test_a_reopened_session_keeps_its_answers_and_card_summaries(
    sidecar: SidecarClient, storage: Path, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    todos = [{"id": "1", "content": "write notes", "status": "in_progress"}]
    mock = start_mock(
        mock_model,
        [
            {
                "tool_uses": [
                    {"name": "TodoWrite", "input": {"todos": todos}},
                    {"name": "Gate", "input": {"label": "x"}},
                    {"name": "Write", "input": {"file_path": "notes.txt", "content": "line one\nline two\n"}},
                ]
            },
            {"text": "Done."},
        ],
    )
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)

    async def deny(params: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "deny", "feedback": "  not today "}

    async def edit(params: dict[str, Any]) -> dict[str, Any]:
        [proposal] = params["files"]
        return {"decision": "accept", "files": [{"path": proposal["path"], "content": "line one\nmine\n"}]}

    sidecar.answer_approval = deny
    sidecar.answer_review = edit
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "take notes"})
    live = {e["tool_use_id"]: e["summary"] for e in events_of(sidecar) if e["type"] == "tool_call_started"}
    finished = {e["tool_use_id"]: e["summary"] for e in events_of(sidecar) if e["type"] == "tool_call_finished"}

    history = await history_in_a_new_sidecar(storage, workspace, session_id)

    # The cards' lines are the ones shown live, not the raw input.
    assert {k: v["summary"] for k, v in history["calls"].items()} == live
    assert {k: v["result_summary"] for k, v in history["calls"].items()} == finished
    approval, review = history["decisions"]
    assert approval["kind"] == "approval" and approval["tool_name"] == "Gate"
    assert (approval["decision"], approval["answered_by"], approval["feedback"]) == ("deny", "user", "not today")
    assert review["kind"] == "review" and review["decision"] == "accept"
    target = str(workspace / "notes.txt")
    assert review["files"] == [{"path": target, "change": "create"}] and review["edited"] == [target]
    assert history["todos"][0]["content"] == "write notes"


async def test_a_reopened_session_knows_which_rule_an_always_allow_saved(
    sidecar: SidecarClient, storage: Path, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"tool_uses": [{"name": "Gate", "input": {"label": "x"}}]}, {"text": "Done."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    covered: list[bool | None] = []
    sidecar.answer_approval = always_allow(sidecar, "Gate", "session", covered)
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "open the gate"})
    history = await history_in_a_new_sidecar(storage, workspace, session_id)
    [approval] = history["decisions"]
    assert approval["decision"] == "allow"
    assert approval["saved_rule"] == {"rule": "Gate", "scope": "session", "covers_call": covered[0]}


async def test_answering_with_accept_edits_switches_the_mode_and_a_reopened_session_says_so(
    sidecar: SidecarClient, storage: Path, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    # The sandbox is on by default in the editor, and its autoAllow would make `mkdir build` in the workspace ask
    # nothing: turned off here (a workspace may tighten it), so the command asks as it does without the sandbox.
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text('{"sandbox": {"autoAllow": false}}')
    mock = start_mock(
        mock_model,
        [
            {"tool_uses": [{"name": "Bash", "input": {"command": "mkdir build"}}]},
            {"tool_uses": [{"name": "Bash", "input": {"command": "mkdir dist"}}]},
            {"text": "Done."},
        ],
    )
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)

    async def accept_edits(params: dict[str, Any]) -> dict[str, Any]:
        # What the editor does for "Allow, and accept edits": switch the mode (naming the call), then allow.
        assert params["offersAcceptEdits"] is True
        switch = {"sessionId": session_id, "mode": "acceptEdits", "toolUseId": params["toolUseId"]}
        await sidecar.call(p.SETTINGS_SET_MODE, switch)
        return {"decision": "allow"}

    sidecar.answer_approval = accept_edits
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "make the build dirs"})
    assert (workspace / "build").is_dir() and (workspace / "dist").is_dir()
    assert len(sidecar.approvals) == 1  # the second mkdir ran in acceptEdits mode, without asking
    assert (await sidecar.call(p.SETTINGS_GET, {"sessionId": session_id}))["mode"] == "acceptEdits"

    history = await history_in_a_new_sidecar(storage, workspace, session_id)
    [approval] = history["decisions"]
    assert (approval["decision"], approval["accepted_edits"], approval["saved_rule"]) == ("allow", True, None)


async def test_a_diff_review_answered_with_accept_edits_lets_the_next_edit_through_unreviewed(
    sidecar: SidecarClient, storage: Path, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(
        mock_model,
        [
            {"tool_uses": [{"name": "Write", "input": {"file_path": "one.txt", "content": "1\n"}}]},
            {"tool_uses": [{"name": "Write", "input": {"file_path": "two.txt", "content": "2\n"}}]},
            {"text": "Done."},
        ],
    )
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    reviewed: list[dict[str, Any]] = []

    async def accept_edits(params: dict[str, Any]) -> dict[str, Any]:
        reviewed.append(params)
        switch = {"sessionId": session_id, "mode": "acceptEdits", "toolUseId": params["toolUseId"]}
        await sidecar.call(p.SETTINGS_SET_MODE, switch)
        return {"decision": "accept"}

    sidecar.answer_review = accept_edits
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "write two files"})
    assert [r["offersAcceptEdits"] for r in reviewed] == [True]  # the second Write was not reviewed
    assert (workspace / "one.txt").read_text() == "1\n" and (workspace / "two.txt").read_text() == "2\n"
    history = await history_in_a_new_sidecar(storage, workspace, session_id)
    [review] = history["decisions"]
    assert (review["kind"], review["decision"], review["accepted_edits"]) == ("review", "accept", True)


async def test_a_session_another_process_is_changing_can_be_shown_but_not_changed(
    sidecar: SidecarClient, storage: Path, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"text": "First answer."}, {"text": "Second answer."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "hi"})

    # This sidecar had a turn in it: the session is its own now. Another editor window shows it, and is told, in
    # words, why it cannot send to it.
    second = await start_client(TEST_SERVER)
    try:
        await initialize(second, storage, workspace)
        await configure(second, mock)
        await second.call(p.SESSION_LOAD, {"sessionId": session_id})
        history = await second.call(p.CHAT_HISTORY, {"sessionId": session_id})
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
        with pytest.raises(JsonRpcException, match=r"open in another toolgate process \(an editor's sidecar, pid \d+"):
            await second.call(p.CHAT_SEND, {"sessionId": session_id, "text": "from the other window"})
        with pytest.raises(JsonRpcException, match="cannot be deleted now"):
            await second.call(p.SESSION_DELETE, {"sessionId": session_id})
        history = await second.call(p.CHAT_HISTORY, {"sessionId": session_id})  # still open there, as it was
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    finally:
        await stop_client(second)
    history = await sidecar.call(p.CHAT_HISTORY, {"sessionId": session_id})
    assert "from the other window" not in str(history["messages"])  # nothing of it reached the transcript
    assert len(mock.requests) == 1
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "still mine"})  # the owner goes on
    assert len(mock.requests) == 2


async def test_compact_summarises_the_older_turns_and_reports_it_as_a_chat_event(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    (workspace / "notes.txt").write_text("remember the milk\n")
    summary = "## Goal and constraints\nremember things\n## Next step\nask"
    mock = MockModelServer(
        {
            "steps": [
                {"text": "Let me look.", "tool_uses": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
                {"text": "Milk."},
                {"text": "Still milk."},
            ],
            "no_tools": {"text": summary},
        }
    ).start()
    mock_model.append(mock)
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "What do my notes say?"})
    assert await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "And now?"}) == {"stopReason": "end_turn"}

    result = await sidecar.call(p.CHAT_COMPACT, {"sessionId": session_id, "focus": "the notes"})

    assert result == {"compacted": True}
    [compacted] = [e for e in events_of(sidecar) if e["type"] == "compacted"]
    assert compacted["trigger"] == "manual" and compacted["summary"] == summary and compacted["kept"] == 1
    usage = [e for e in events_of(sidecar) if e["type"] == "usage"]
    assert len(usage) == 3 and all(0 < e["context_tokens"] <= e["context_window"] for e in usage)
    # The history is the whole conversation, the summarised messages marked: the model goes on from the summary.
    history = await sidecar.call(p.CHAT_HISTORY, {"sessionId": session_id})
    assert [m["role"] for m in history["messages"]] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert history["messages"][0]["content"] == [{"type": "text", "text": "What do my notes say?"}]
    [mark] = history["compactions"]
    assert mark["after_messages"] == 6 and mark["summarised_messages"] == 5 and mark["trigger"] == "manual"
    assert summary in mark["summary"]


async def test_the_context_window_setting_sets_where_compaction_starts(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    window = 20_000
    files = write_long_session_files(workspace, 12)
    mock = MockModelServer(long_session(files, context_window=window)).start()
    mock_model.append(mock)
    settings = {"provider": "openai", "baseUrl": mock.openai_url, "model": "mock-model"}
    with pytest.raises(JsonRpcException, match="contextWindow") as refused:
        await sidecar.call(p.PROVIDER_CONFIGURE, {**settings, "contextWindow": 0})
    assert "greater than or equal to 1000" in str(refused.value)
    await sidecar.call(p.PROVIDER_CONFIGURE, {**settings, "contextWindow": window})
    session_id = await sidecar.new_session(workspace)

    assert await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "Read every module"}) == {
        "stopReason": "end_turn"
    }

    events = events_of(sidecar)
    compactions = [e for e in events if e["type"] == "compacted"]
    # The threshold made the room, before the mock (whose window is the same) had to refuse anything.
    assert compactions and all(e["trigger"] == "auto" for e in compactions)
    assert [r.rejection for r in mock.requests if r.status != 200] == []
    usage = [e for e in events if e["type"] == "usage"]
    assert len(usage) == len(files) + 1 and all(0 < e["context_tokens"] <= window == e["context_window"] for e in usage)
    # Each compaction names the first call it kept: every call from there on is in the `kept` messages (one Read
    # per reply, each reply and its result two messages), every call before it was summarised.
    for compacted in compactions:
        at = events.index(compacted)
        started = [e["tool_use_id"] for e in events[:at] if e["type"] == "tool_call_started"]
        kept_calls = started[started.index(compacted["kept_from_tool_use_id"]) :]
        assert 2 * len(kept_calls) == compacted["kept"]
