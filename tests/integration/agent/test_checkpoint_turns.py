"""A chat session's checkpoints: one per user message, and after the user restores files the next message
tells the model which files were restored, to when."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.stored_chat import open_chat
from toolgate.core.permission import NonInteractiveApprover
from toolgate.mockmodel import MockModelServer
from toolgate.session_files import SessionFiles


async def test_each_message_is_a_turn_and_a_restore_is_announced_to_the_model(tmp_path: Path, workspace: Path) -> None:
    (workspace / "app.py").write_text("v1\n")
    store = SessionFiles(tmp_path / "data")
    with MockModelServer([{"text": "One."}, {"text": "Two."}]) as mock:
        config = ModelConfig(provider="anthropic", model="m", api_key=SecretStr("k"), base_url=mock.url)
        chat, _ = open_chat(store, make_provider(config), NonInteractiveApprover(), workspace=workspace)
        checkpoints = chat.runtime.checkpoints
        assert checkpoints is not None
        assert await chat.send("first") == "end_turn"
        first = checkpoints.checkpoints()[0]
        assert (first.turn, first.kind) == (1, "turn")
        (workspace / "app.py").write_text("v2\n")  # a change the user takes back
        checkpoints.restore(first.id)
        assert (workspace / "app.py").read_text() == "v1\n"
        assert await chat.send("second") == "end_turn"
        await chat.aclose()
        sent = mock.requests[1].json["messages"][-1]["content"][0]["text"]
        assert f"restored 1 file(s) to checkpoint {first.id} (turn 1): app.py" in sent and sent.endswith("second")
        assert "restored" not in mock.requests[0].json["messages"][-1]["content"][0]["text"]
    assert [c.kind for c in checkpoints.checkpoints()] == ["turn", "restore", "turn"]
