"""Compaction's pure parts: when to compact, where to cut, what the summary request says, and the compacted
conversation's shape. No I/O (the side request and the re-reads are agent/compaction.py).

The cut is always at an assistant message: everything before it is summarised, it and everything after it are
kept verbatim. A tool_result answers the assistant message right before it, so a cut there never separates a
tool_use from its result. The compacted conversation is

    user       [summary of the earlier part, and the person's latest request verbatim]
    assistant  Read(file) ...          (the re-attached files, only when there are any)
    user       their results
    assistant  <the first kept message> ...

which alternates roles and pairs every call, as every API requires.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.core.messages import ImageBlock, TextBlock, ToolResult, ToolUse
from toolgate.text.tokens import estimate_tokens

# Compact once a request's estimate passes this share of the model's window.
COMPACT_AT = 0.8
# The recent turns kept verbatim may take up to this share of the window.
KEEP_RECENT_SHARE = 0.25
# What the summary request may take of the window (the rest is its reply and the estimate's error).
SUMMARY_INPUT_SHARE = 0.6
# In the summary request, each tool output is cut to this many characters (the summary needs what was done and
# found, not every line; the whole output stays in the output store).
SUMMARY_RESULT_CHARS = 1_500
# How many of the most recently read files a compaction reads again, and what they may take of the window.
REATTACH_FILES = 3
REATTACH_SHARE = 0.15

SECTIONS = (
    "Goal and constraints",
    "Decisions",
    "Files touched and their state",
    "Todo list",
    "Open errors",
    "Next step",
)

SUMMARY_SYSTEM = (
    "You summarise a coding session between a person and an AI coding agent so that the agent can carry on "
    "from the summary alone. You have no tools; answer with the summary only."
)


def message_tokens(message: ChatMessage) -> int:
    return estimate_tokens(message.model_dump_json())


def should_compact(request_tokens: int, window: int) -> bool:
    return request_tokens >= COMPACT_AT * window


def cut_index(messages: Sequence[ChatMessage], keep_tokens: int) -> int | None:
    """Where the verbatim tail starts: the earliest assistant message whose tail fits `keep_tokens`, but always
    the last assistant message at least. None when there is not one whole exchange before it to summarise."""
    assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
    if len(assistants) < 2:
        return None
    cut = assistants[-1]
    tail = sum(message_tokens(m) for m in messages[cut:])
    for index in reversed(assistants[1:-1]):
        tail += sum(message_tokens(m) for m in messages[index:cut])
        if tail > keep_tokens:
            break
        cut = index
    return cut


def latest_prompt(messages: Sequence[ChatMessage]) -> str | None:
    """The person's most recent message (a user message with text), for the summary to quote verbatim."""
    for message in reversed(messages):
        if message.role == "user" and any(isinstance(b, TextBlock) for b in message.content):
            return message.text()
    return None


def render_for_summary(messages: Sequence[ChatMessage], max_chars: int) -> str:
    """The conversation as plain text for the summary request (which offers no tools, so it may not carry
    tool_use blocks). Long outputs are cut; when the whole is still over `max_chars`, its middle goes."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                lines.append(f"{message.role.upper()}: {block.text}")
            elif isinstance(block, ToolUse):
                lines.append(f"CALL {block.name} {json.dumps(block.input, ensure_ascii=False)[:SUMMARY_RESULT_CHARS]}")
            elif isinstance(block, ToolResult):
                text = block.text()
                if len(text) > SUMMARY_RESULT_CHARS:
                    text = f"{text[:SUMMARY_RESULT_CHARS]}\n[... {len(text) - SUMMARY_RESULT_CHARS:,} more characters]"
                lines.append(f"RESULT{' (error)' if block.is_error else ''}: {text}")
            elif isinstance(block, ImageBlock):
                lines.append(f"{message.role.upper()}: [image {block.source.media_type}]")
    text = "\n\n".join(lines)
    if len(text) <= max_chars:
        return text
    # The start holds the goal, the end the latest state: the middle goes first.
    head = max_chars // 3
    tail = max_chars - head
    return f"{text[:head]}\n\n[... {len(text) - max_chars:,} characters of the middle left out ...]\n\n{text[-tail:]}"


def summary_instruction(transcript: str, todos: str, focus: str | None) -> str:
    headings = "\n".join(f"## {section}" for section in SECTIONS)
    focus_line = f"\nThe person asked the summary to focus on: {focus}\n" if focus else ""
    return (
        "Below is the earlier part of a coding session. Write a summary the agent will continue from; the "
        "conversation itself will be gone. Use exactly these Markdown headings, in this order, and write "
        "'none' under a heading that has nothing:\n"
        f"{headings}\n"
        "Name files by path and say what state each was left in; keep exact error messages, commands and "
        "identifiers that still matter; say what the agent was about to do next."
        f"{focus_line}\n"
        f"Current todo list:\n{todos or 'none'}\n\n"
        f"<session>\n{transcript}\n</session>"
    )


def missing_sections(summary: str) -> list[str]:
    return [section for section in SECTIONS if f"## {section}".lower() not in summary.lower()]


def summary_message(summary: str, summarised: int, prompt: str | None) -> ChatMessage:
    quoted = f"\n\nThe person's latest message, verbatim:\n{prompt}" if prompt else ""
    return user_text(
        f"[This session was compacted to fit the model's context window: the {summarised} earlier messages "
        "were replaced by the summary below (the full conversation stays in the session's transcript). Files "
        "read before this point must be read again before they are edited, except those re-attached below.]\n\n"
        f"{summary.strip()}{quoted}"
    )


def compacted(
    head: ChatMessage, reattached: Sequence[tuple[ToolUse, ToolResult]], tail: Sequence[ChatMessage]
) -> list[ChatMessage]:
    """The conversation after a compaction (see the module's docstring)."""
    out = [head]
    if reattached:
        out.append(ChatMessage(role="assistant", content=[use for use, _ in reattached]))
        out.append(ChatMessage(role="user", content=[result for _, result in reattached]))
    if tail and tail[0].role == "user":
        raise ValueError("the kept part of a compacted conversation starts with an assistant message")
    out.extend(tail)
    return out
