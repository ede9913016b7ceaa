"""Stored sessions: the layout, list/load/delete, transcripts, and resuming after a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from tests.integration.agent.helpers import GateTool

from toolgate.agent.conversation import ChatMessage
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.retry import RetryPolicy
from toolgate.agent.stored_chat import open_chat
from toolgate.agent.transcript import MessageEntry, Transcript, load_transcript
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.mockmodel import MockModelServer
from toolgate.runtime import RuntimeOptions
from toolgate.session_files import SessionFiles, SessionNotFound, default_data_root
from toolgate.tools.todo_write import TODOS


def test_data_root_follows_xdg(tmp_path: Path) -> None:
    assert default_data_root({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "toolgate"
    assert default_data_root({"XDG_DATA_HOME": "relative/dir"}) == Path.home() / ".local/share/toolgate"


def test_create_list_load_delete(tmp_path: Path, workspace: Path) -> None:
    store = SessionFiles(tmp_path / "data")
    first = store.create(workspace)
    second = store.create(workspace, PermissionMode.ACCEPT_EDITS, session_id="named-1")
    store.touch(first.id, title="Fix the parser")
    broken = store.sessions_dir / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text("{not json")

    assert [m.id for m in store.list()] == [first.id, second.id]  # newest first; the broken one skipped
    assert (broken / "meta.json").read_text() == "{not json"  # and left as it was
    assert store.load("named-1").mode is PermissionMode.ACCEPT_EDITS
    assert store.load(first.id).title == "Fix the parser"
    with pytest.raises(FileExistsError):
        store.create(workspace, session_id="named-1")
    with pytest.raises(ValueError, match="not a session id"):
        store.session_dir("../escape")

    store.delete("named-1")
    assert not (store.sessions_dir / "named-1").exists()
    with pytest.raises(SessionNotFound):
        store.load("named-1")


def test_a_line_cut_short_by_a_crash_is_skipped_and_never_swallows_the_next(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    writer = Transcript(path)
    writer.append(
        MessageEntry(message=ChatMessage.model_validate({"role": "user", "content": [{"type": "text", "text": "one"}]}))
    )
    writer.close()
    with path.open("ab") as handle:
        handle.write(b'{"type": "message", "message": {"role": "assist')  # the crash
    writer = Transcript(path)
    writer.append(
        MessageEntry(message=ChatMessage.model_validate({"role": "user", "content": [{"type": "text", "text": "two"}]}))
    )
    writer.close()

    loaded = load_transcript(path)
    assert loaded.unreadable_lines == [2]
    assert [b.text for b in loaded.messages[0].content] == ["one", "two"]  # type: ignore[union-attr]
    assert b'"role": "assist\n' in path.read_bytes()  # the damaged line is kept, not rewritten


def provider(mock: MockModelServer) -> Any:
    config = ModelConfig(base_url=mock.url, api_key=SecretStr("k"), model="mock-model", timeout_seconds=30)
    return make_provider(config)


async def test_a_session_is_saved_and_resumed(tmp_path: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    store = SessionFiles(tmp_path / "data")
    todos = {"todos": [{"id": "1", "content": "Read a", "status": "in_progress"}]}
    steps = [
        {"tool_uses": [{"name": "TodoWrite", "input": todos}, {"name": "Read", "input": {"file_path": "a.txt"}}]},
        {"text": "It says alpha."},
        {"text": "Still alpha."},
    ]
    with MockModelServer(steps) as mock:
        chat, meta = open_chat(store, provider(mock), NonInteractiveApprover(), workspace=workspace)
        outputs = chat.runtime.session.deps.get(OUTPUT_STORE).directory
        assert outputs == store.session_dir(meta.id) / "outputs"
        assert await chat.send("What does a.txt say?\nPlease check.") == "end_turn"
        await chat.aclose()

        assert store.load(meta.id).title == "What does a.txt say?"
        entries = [json.loads(line)["type"] for line in store.transcript_path(meta.id).read_text().splitlines()]
        assert entries == ["message", "message", "todos", "message", "message"]

        again, _ = open_chat(store, provider(mock), NonInteractiveApprover(), resume=meta.id)
        assert [m.role for m in again.messages] == ["user", "assistant", "user", "assistant"]
        assert [t.content for t in again.todos] == ["Read a"]
        assert await again.send("And now?") == "end_turn"
        await again.aclose()
        assert len(mock.requests[2].json["messages"]) == 5 and mock.requests[2].status == 200


async def test_resuming_after_a_crash_mid_turn_repairs_the_pairing(tmp_path: Path, workspace: Path) -> None:
    store = SessionFiles(tmp_path / "data")
    meta = store.create(workspace)
    crashed = Transcript(store.transcript_path(meta.id))
    for message in (
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_lost", "name": "Gate", "input": {}}]},
    ):
        crashed.append(MessageEntry(message=ChatMessage.model_validate(message)))
    crashed.close()

    with MockModelServer([{"text": "Picking up again."}]) as mock:
        chat, _ = open_chat(
            store, provider(mock), NonInteractiveApprover(), resume=meta.id, runtime=RuntimeOptions(tools=[GateTool()])
        )
        [result] = chat.messages[-1].tool_results()
        assert result.tool_use_id == "toolu_lost" and result.is_error and "session stopped" in result.text()
        assert await chat.send("What happened?") == "end_turn"
        await chat.aclose()
        assert mock.requests[0].status == 200, mock.requests[0].rejection

    lines = [json.loads(line) for line in store.transcript_path(meta.id).read_text().splitlines()]
    assert [line["type"] for line in lines] == ["message", "message", "message", "repair", "message", "message"]
    assert lines[3]["answered"] == ["toolu_lost"]
    assert not load_transcript(store.transcript_path(meta.id)).repair.changed  # the fix was written down


async def test_todos_are_kept_per_session(tmp_path: Path, workspace: Path) -> None:
    store = SessionFiles(tmp_path / "data")
    with MockModelServer([]) as mock:
        one, _ = open_chat(store, provider(mock), NonInteractiveApprover(), workspace=workspace, retry=RetryPolicy())
        two, _ = open_chat(store, provider(mock), NonInteractiveApprover(), workspace=workspace)
        assert one.runtime.session.deps.get(TODOS) is not two.runtime.session.deps.get(TODOS)
        await one.aclose()
        await two.aclose()
