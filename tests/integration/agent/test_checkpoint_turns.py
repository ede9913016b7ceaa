"""A chat session's checkpoints: one per user message, and after the user restores files the next message
tells the model which files were restored, to when."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pydantic import SecretStr

from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.stored_chat import open_chat
from toolgate.core.context import ToolContext
from toolgate.core.permission import (
    ApprovalAnswer,
    ApprovalRequest,
    NonInteractiveApprover,
    ReviewAnswer,
    ReviewRequest,
)
from toolgate.mockmodel import MockModelServer, RecordedRequest
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
        (workspace / "app.py").write_text("v2\n")  # the user's own change: only a whole-tree restore takes it back
        checkpoints.restore(first.id, whole_tree=True)
        assert (workspace / "app.py").read_text() == "v1\n"
        assert await chat.send("second") == "end_turn"
        await chat.aclose()
        sent = mock.requests[1].json["messages"][-1]["content"][0]["text"]
        assert f"restored 1 file(s) to checkpoint {first.id} (turn 1): app.py" in sent and sent.endswith("second")
        assert "restored" not in mock.requests[0].json["messages"][-1]["content"][0]["text"]
    assert [c.kind for c in checkpoints.checkpoints()] == ["turn", "restore", "turn"]


def _headless(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgate", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
    )


def _texts(request: RecordedRequest) -> list[str]:
    return [b["text"] for m in request.json["messages"] for b in m["content"] if b.get("type") == "text"]


def test_chat_print_then_rewind_then_resume_sees_the_restored_files_and_the_cut_conversation(
    tmp_path: Path, workspace: Path
) -> None:
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    steps = [
        {"text": "Noted one."},
        {"text": "Writing.", "tool_uses": [{"name": "Write", "input": {"file_path": "new.py", "content": "v2\n"}}]},
        {"text": "Wrote v2."},
        {"text": "It is gone."},
        {"text": "From the start of turn 2."},
    ]
    with MockModelServer(steps) as mock:
        env.update(ANTHROPIC_BASE_URL=mock.url, ANTHROPIC_API_KEY="test-key", XDG_DATA_HOME=str(tmp_path / "xdg"))
        common = ["--data-dir", str(data), "--permission-mode", "bypassPermissions"]
        first = _headless(["chat", "--print", "one", "--workspace", str(workspace), "--session-id", "c1", *common], env)
        assert first.returncode == 0, first.stderr
        second = _headless(["chat", "--print", "write v2", "--resume", "c1", *common], env)
        assert second.returncode == 0, second.stderr
        assert (workspace / "new.py").read_text() == "v2\n"
        rows = [json.loads(line) for line in _headless(["checkpoints", "list", "--session", "c1", *common[:2]], env)
                .stdout.splitlines()]  # fmt: skip
        turn_two = next(r["id"] for r in rows if r["turn"] == 2 and r["kind"] == "turn")

        code = _headless(["rewind", "--session", "c1", "--to", turn_two, "--code", *common[:2]], env)
        assert code.returncode == 0, code.stderr
        assert not (workspace / "new.py").exists()
        third = _headless(["chat", "--print", "and now?", "--resume", "c1", *common], env)
        assert third.returncode == 0, third.stderr
        told = _texts(mock.requests[3])[-1]
        assert f"restored 1 file(s) to checkpoint {turn_two} (turn 2): new.py" in told and told.endswith("and now?")

        cut = _headless(["rewind", "--session", "c1", "--to", turn_two, "--conversation", *common[:2]], env)
        assert cut.returncode == 0, cut.stderr
        fourth = _headless(["chat", "--print", "again", "--resume", "c1", *common], env)
        assert fourth.returncode == 0, fourth.stderr
        # The model hears turn 1 and the new message only: turns 2 and 3 were cut away.
        assert _texts(mock.requests[4]) == ["one", "Noted one.", "again"]


class _RecordingApprover:
    """Says yes to everything, and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        self.asked.append(request.summary)
        return ApprovalAnswer(decision="allow")

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        self.asked.append(request.title)
        return ReviewAnswer(decision="accept")


async def test_a_subagents_changes_are_in_its_parents_turn_and_its_asks_name_it(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "app.py").write_text("v1\n")
    store = SessionFiles(tmp_path / "data")
    agent = {"description": "bump", "prompt": "bump app.py", "subagent_type": "general"}
    script = {
        "steps": [{"tool_uses": [{"id": "agent-1", "name": "Agent", "input": agent}]}, {"text": "Bumped."}],
        "lanes": {
            "subagent of type `general`": [
                {"tool_uses": [{"name": "Read", "input": {"file_path": "app.py"}}]},
                {"tool_uses": [{"name": "Write", "input": {"file_path": "app.py", "content": "v2\n"}}]},
                {"text": "Wrote v2."},
            ]
        },
    }
    approver = _RecordingApprover()
    with MockModelServer(script) as mock:
        config = ModelConfig(provider="anthropic", model="m", api_key=SecretStr("k"), base_url=mock.url)
        chat, _ = open_chat(store, make_provider(config), approver, workspace=workspace)
        checkpoints = chat.runtime.checkpoints
        assert checkpoints is not None
        assert await chat.send("bump it") == "end_turn"
        await chat.aclose()
    assert (workspace / "app.py").read_text() == "v2\n"
    assert len(approver.asked) == 1 and approver.asked[0].startswith("general: ")
    turns = [c for c in checkpoints.checkpoints() if c.kind == "turn"]
    assert [c.turn for c in turns] == [1]  # the child's conversation started no turn of its own
    checkpoints.restore(turns[0].id)  # rewinding the parent's turn undoes the child's change
    assert (workspace / "app.py").read_text() == "v1\n"
