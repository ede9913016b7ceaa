"""Every text an export is made from passes the redactor once, before either format is rendered from it."""

from __future__ import annotations

import datetime as dt
import json

from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.export_redact import ExportRedactor
from toolgate.agent.stored_chat import TITLE_CHARS, title_of
from toolgate.agent.subagent_record import SubagentCall, SubagentRun
from toolgate.agent.transcript import CompactionMark
from toolgate.agent.transcript_export import (
    ExportedSession,
    SessionExport,
    export_file_name,
    export_json,
    export_markdown,
)
from toolgate.core.messages import TextBlock, ToolResult, ToolUse

WHEN = dt.datetime(2026, 12, 4, 20, 0, tzinfo=dt.UTC)
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK_TOKEN = "xoxb-" + "1234567890-abcdefghij"
SESSION = ExportedSession(id="s1", title="t", workspace="/w", created=WHEN, updated=WHEN)


def _call(use_input: object) -> list[ChatMessage]:
    return [
        user_text("go"),
        ChatMessage(role="assistant", content=[ToolUse(id="u1", name="Mcp", input=use_input)]),
        ChatMessage(role="user", content=[ToolResult(tool_use_id="u1", content="ok")]),
    ]


def test_every_string_of_a_tool_input_is_redacted_however_deep_and_nothing_else_changes() -> None:
    given = {"steps": [{"env": {"KEY": AWS_KEY}, "n": 3, "on": True}, None, f"echo {SLACK_TOKEN}"], AWS_KEY: 1.5}
    redactor = ExportRedactor()
    assert redactor.value(given) == {
        "steps": [
            {"env": {"KEY": "[REDACTED AWS access key id]"}, "n": 3, "on": True},
            None,
            "echo [REDACTED Slack token]",
        ],
        "[REDACTED AWS access key id]": 1.5,
    }
    assert redactor.found == ["AWS access key id", "Slack token", "AWS access key id"]


def test_a_conversation_without_secrets_comes_back_as_the_same_objects() -> None:
    history = _call({"command": "ls", "args": ["-l", {"x": 1}]})
    grandchild = SubagentRun(task_id="c", agent_type="explore", description="d", answer="fine")
    call = SubagentCall(id="c", name="Agent", summary="explore: d", result_summary="fine", subagent=grandchild)
    run = SubagentRun(task_id="a", agent_type="general", description="d", calls=[call], answer="fine")
    mark = CompactionMark(after_messages=1, summarised_messages=1, trigger="manual", summary="s", at=WHEN)
    redactor = ExportRedactor()
    assert all(redactor.message(message) is message for message in history)
    assert redactor.run(run) is run and redactor.compaction(mark) is mark and redactor.found == []


def test_an_export_without_secrets_has_no_note_and_the_json_keeps_its_keys() -> None:
    history = _call({"command": "ls"})
    markdown = export_markdown(SESSION, history, [])
    started = "- Started: 2026-12-04 20:00 UTC · last used: 2026-12-04 20:00 UTC"
    assert markdown.startswith(f"# t\n\n- Workspace: `/w`\n{started}\n- Prompts: 1\n\n## You\n")
    document = export_json(SESSION, history, [])
    assert list(json.loads(document)) == ["format", "version", "session", "messages", "compactions", "subagents"]
    assert SessionExport.model_validate_json(document).messages == history


def test_a_secret_is_redacted_before_a_markdown_line_is_shortened() -> None:
    """Cut first, a key past the line's end would leave its first characters in the export, which no shape matches."""
    history = _call({"command": "x" * 150 + " " + AWS_KEY})
    line = next(line for line in export_markdown(SESSION, history, []).splitlines() if line.startswith("- **Mcp**"))
    assert line.endswith(" [REDACTE…` — ok")  # without redaction first: " AKIAIOSF…"


def test_the_environments_secret_values_a_compaction_summary_and_the_file_name_are_redacted() -> None:
    known = ["hunter2-but-longer"]
    history = [
        user_text("the password is hunter2-but-longer"),
        ChatMessage(role="assistant", content=[TextBlock(text="ok")]),
    ]
    mark = CompactionMark(
        after_messages=2, summarised_messages=2, trigger="manual", summary=f"uses {SLACK_TOKEN}", at=WHEN
    )
    session = SESSION.model_copy(update={"title": f"post with {SLACK_TOKEN}"})
    markdown = export_markdown(session, history, [mark], known_secrets=known)
    assert "hunter2" not in markdown and SLACK_TOKEN not in markdown
    assert "the password is [REDACTED secret from the environment]" in markdown
    assert "- toolgate took 3 secret values (Slack token, secret from the environment) out of this export;" in markdown
    assert export_file_name(session.title, "md") == "post-with-redacted-slack-token.md"


def test_a_session_title_is_redacted_before_it_is_cut() -> None:
    """A token near the 80th character would be cut into a piece no shape matches: taken out first, nothing of it
    stays in the title (shown in the history list, and at the head of every export)."""
    token = "ghp_" + "A1b2C3d4E5" * 4
    title = title_of(f"{'Set up the deploy key for our staging host now,'} the token is {token}\nand more")
    assert "ghp_" not in title and "A1b2" not in title
    assert title.startswith("Set up the deploy key") and len(title) <= TITLE_CHARS
    assert title_of("  \n") == ""


def test_two_secret_keys_that_redact_alike_both_keep_their_values() -> None:
    other_key = "AKIA" + "ABCDEFGHIJKLMNOP"
    redacted = ExportRedactor().value({AWS_KEY: "first", other_key: "second", "plain": 0})
    assert redacted == {
        "[REDACTED AWS access key id]": "first",
        "[REDACTED AWS access key id] (2)": "second",
        "plain": 0,
    }
