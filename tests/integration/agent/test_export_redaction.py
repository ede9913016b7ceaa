"""An export holds no secret from the session it was made from: not in a prompt, a tool's input, the model's text or
a child's run, only results being redacted before they are recorded. A real chat against the mock model (a child in
its lane), stored as the panel stores it and exported through the panel's own function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.loop import AgentChat
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.subagent_scope import SubagentSettings
from toolgate.agent.subagents import attach_subagents
from toolgate.agent.transcript import MessageEntry, Transcript, load_transcript
from toolgate.agent.transcript_export import SessionExport
from toolgate.core.messages import TextBlock, ToolResult, ToolUse
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.mockmodel import MockModelServer
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.session_files import SessionFiles
from toolgate.sidecar.sessions_handlers import export_session

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"  # AWS's documented example id: fake, and split so no scanner flags this file
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8"
PRIVATE_KEY = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
SECRETS = (AWS_KEY, GITHUB_TOKEN, PRIVATE_KEY, "b3BlbnNzaC1rZXktdjEAAAAA")
PROMPT = f"Set up the deploy key; the token is {GITHUB_TOKEN}"
GENERAL = "subagent of type `general`"


async def _stored_session(store: SessionFiles, workspace: Path) -> str:
    """A session whose prompt, Bash command, Write content, answer and child run each hold a secret."""
    agent = {"description": "check the key", "prompt": "check it", "subagent_type": "general"}
    script = {
        "steps": [
            {
                "text": f"I will use {GITHUB_TOKEN} for the push.",
                "tool_uses": [
                    {"id": "bash-1", "name": "Bash", "input": {"command": f"echo {AWS_KEY}"}},
                    {"id": "write-1", "name": "Write", "input": {"file_path": "id_test", "content": PRIVATE_KEY}},
                ],
            },
            {"tool_uses": [{"id": "agent-1", "name": "Agent", "input": agent}]},
            {"text": "Done."},
        ],
        "lanes": {
            GENERAL: [
                {"tool_uses": [{"id": "c-bash", "name": "Bash", "input": {"command": f"echo {AWS_KEY}"}}]},
                {"text": f"The key id is {AWS_KEY}"},
            ]
        },
    }
    meta = store.create(workspace)
    store.touch(meta.id, title=PROMPT)
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.ACCEPT_EDITS))
    with MockModelServer(script) as mock:
        config = ModelConfig(provider="anthropic", model="m", api_key=SecretStr("k"), base_url=mock.url)
        chat = AgentChat(runtime, make_provider(config), transcript=Transcript(store.transcript_path(meta.id)))
        attach_subagents(chat, SubagentSettings(max_depth=1))
        assert await chat.send(PROMPT) == "end_turn"
        await chat.aclose()
    return meta.id


async def test_an_export_holds_no_secret_and_says_how_many_it_took_out(tmp_path: Path, workspace: Path) -> None:
    store = SessionFiles(tmp_path / "data")
    session_id = await _stored_session(store, workspace)
    recorded = store.transcript_path(session_id).read_text()
    assert GITHUB_TOKEN in recorded and AWS_KEY in recorded and "PRIVATE KEY-----" in recorded  # the inputs as written

    markdown = export_session(store, session_id, "markdown")
    document = export_session(store, session_id, "json")
    for exported in (markdown, document):
        assert not any(secret in exported.content or secret in exported.file_name for secret in SECRETS)
    # Taken out: the title and the prompt (the token), the answer's text (the token), the Bash command (the key id),
    # the Write's content (the key), and in the child's run its Bash call's line (the key id) and its answer.
    note = (
        "toolgate took 7 secret values (GitHub token, AWS access key id, private key) out of this export; each reads "
        "`[REDACTED <kind>]` where it was."
    )
    header = markdown.content.split("\n\n## You", 1)[0]
    assert header.endswith(f"- Prompts: 1\n- {note}")
    assert header.startswith("# Set up the deploy key; the token is [REDACTED GitHub token]\n")
    assert "- **Bash** `echo [REDACTED AWS access key id]`" in markdown.content
    assert "  > The key id is [REDACTED AWS access key id]\n" in markdown.content

    parsed = json.loads(document.content)
    assert parsed["redacted"] == {
        "count": 7,
        "kinds": {"GitHub token": 3, "AWS access key id": 3, "private key": 1},
        "note": note,
    }
    assert list(parsed) == ["format", "version", "redacted", "session", "messages", "compactions", "subagents"]
    exported = SessionExport.model_validate_json(document.content)  # the same schema, still valid
    original = load_transcript(store.transcript_path(session_id)).history
    assert [[b.type for b in m.content] for m in exported.messages] == [[b.type for b in m.content] for m in original]
    uses = {b.id: b for m in exported.messages for b in m.content if isinstance(b, ToolUse)}
    assert uses["bash-1"].input == {"command": "echo [REDACTED AWS access key id]"}
    assert uses["write-1"].input == {"file_path": "id_test", "content": "[REDACTED private key]\n"}
    assert exported.session.title == "Set up the deploy key; the token is [REDACTED GitHub token]"
    run = exported.subagents["agent-1"]
    assert run.answer == "The key id is [REDACTED AWS access key id]"
    assert AWS_KEY not in run.calls[0].summary and "[REDACTED AWS access key id]" in run.calls[0].summary


def test_the_panels_export_takes_out_the_sidecars_own_secret_values_and_results_recorded_unredacted(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value of one of the sidecar's secret variables has no shape; a result may predate a shape now known."""
    monkeypatch.setenv("DEPLOY_API_TOKEN", "plain-words-but-secret")
    store = SessionFiles(tmp_path / "data")
    session_id = store.create(workspace).id
    transcript = Transcript(store.transcript_path(session_id))
    use = ToolUse(id="u1", name="Read", input={"file_path": ".env"})
    for message in [
        user_text("the deploy token is plain-words-but-secret"),
        ChatMessage(role="assistant", content=[use]),
        ChatMessage(role="user", content=[ToolResult(tool_use_id="u1", content=[TextBlock(text=GITHUB_TOKEN)])]),
    ]:
        transcript.append(MessageEntry(message=message))
    transcript.close()

    document = json.loads(export_session(store, session_id, "json").content)
    assert document["redacted"]["kinds"] == {"secret from the environment": 1, "GitHub token": 1}
    assert document["messages"][0]["content"][0]["text"] == "the deploy token is [REDACTED secret from the environment]"
    assert document["messages"][2]["content"][0]["content"] == [{"type": "text", "text": "[REDACTED GitHub token]"}]
