"""A transcript read back in full (summarised messages marked) and exported for people."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.transcript import CompactedEntry, MessageEntry, Transcript, load_transcript
from toolgate.agent.transcript_export import ExportedSession, export_markdown, find_text
from toolgate.core.messages import TextBlock, ToolResult, ToolUse

WHEN = dt.datetime(2026, 12, 4, 20, 0, tzinfo=dt.UTC)


def answer(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=[TextBlock(text=text)])


def compacted_transcript(path: Path) -> None:
    transcript = Transcript(path)
    for message in [
        user_text("first prompt"),
        ChatMessage(role="assistant", content=[ToolUse(id="t1", name="Bash", input={"command": "echo `hi`"})]),
        ChatMessage(role="user", content=[ToolResult(tool_use_id="t1", content="hi\nthere", is_error=True)]),
        answer("first answer"),
        user_text("second prompt"),
        answer("second answer"),
    ]:
        transcript.append(MessageEntry(message=message))
    head = [user_text("[compacted]\n\n## Goal\nread things")]
    transcript.append(CompactedEntry(head=head, kept_messages=1, trigger="manual", at=WHEN))
    transcript.append(MessageEntry(message=user_text("third prompt")))
    transcript.close()


def test_the_history_keeps_summarised_messages_and_marks_where_the_summary_took_over(tmp_path: Path) -> None:
    compacted_transcript(tmp_path / "t.jsonl")
    loaded = load_transcript(tmp_path / "t.jsonl")
    assert loaded.messages[0].text().startswith("[compacted]")  # what the model goes on from
    assert [m.text() for m in loaded.history if m.role == "user" and m.text()] == [
        "first prompt",
        "second prompt",
        "third prompt",
    ]
    [mark] = loaded.compactions
    assert (mark.after_messages, mark.summarised_messages, mark.trigger) == (6, 5, "manual")
    assert mark.summary == "[compacted]\n\n## Goal\nread things"


def test_markdown_summarises_calls_in_a_line_and_quotes_the_summary_where_it_happened(tmp_path: Path) -> None:
    compacted_transcript(tmp_path / "t.jsonl")
    loaded = load_transcript(tmp_path / "t.jsonl")
    session = ExportedSession(id="s1", title="", workspace="/w", created=WHEN, updated=WHEN)
    text = export_markdown(session, loaded.history, loaded.compactions)
    assert text.startswith("# Untitled session\n\n- Workspace: `/w`\n- Started: 2026-12-04 20:00 UTC")
    assert "- Prompts: 3\n" in text
    assert "- **Bash** `` echo `hi` `` — failed: hi\n" in text  # a fence longer than the backticks inside
    note = (
        "> The 5 messages above were summarised on request (2026-12-04 20:00 UTC); the model went on from this "
        "summary:\n>\n> [compacted]\n>\n> ## Goal\n> read things\n\n## You\n\nthird prompt\n"
    )
    assert text.endswith("## toolgate\n\nsecond answer\n\n" + note)


def test_find_text_gives_a_snippet_of_prompts_and_answers_only() -> None:
    history = [
        user_text("x" * 100 + " The Needle here"),
        ChatMessage(role="user", content=[ToolResult(tool_use_id="t", content="needle in a result")]),
    ]
    assert find_text(history, "needle") == "…" + "x" * 35 + " The Needle here"
    assert find_text(history[1:], "needle") is None
