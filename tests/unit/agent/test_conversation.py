"""Merging and repairing conversations (pure)."""

from __future__ import annotations

from typing import Any

from toolgate.agent.conversation import (
    LOST_START_NOTE,
    ChatMessage,
    merge_into,
    repair,
    unanswered_tool_uses,
)
from toolgate.core.messages import TextBlock, ToolResult
from toolgate.mockmodel.pairing import check_anthropic


def msg(role: str, *blocks: dict[str, Any]) -> ChatMessage:
    return ChatMessage.model_validate({"role": role, "content": list(blocks)})


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def use(i: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": "Read", "input": {"file_path": "x"}}


def result(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "ok"}


def as_api(messages: list[ChatMessage]) -> dict[str, Any]:
    return {"max_tokens": 1, "messages": [m.model_dump(mode="json") for m in messages]}


def test_merging_keeps_tool_results_first() -> None:
    messages: list[ChatMessage] = [msg("user", text("hi")), msg("assistant", use("a"))]
    merge_into(messages, msg("user", text("wait")))
    merge_into(messages, msg("user", result("a")))
    assert [type(b) for b in messages[-1].content] == [ToolResult, TextBlock]
    assert len(messages) == 3


def test_a_crash_after_the_tool_use_is_repaired_at_the_end() -> None:
    fixed = repair([msg("user", text("go")), msg("assistant", text("reading"), use("a"), use("b"))])
    assert fixed.answered == ["a", "b"]
    assert [r.tool_use_id for r in fixed.messages[-1].tool_results()] == ["a", "b"]
    assert all(r.is_error and "session stopped" in r.text() for r in fixed.messages[-1].tool_results())
    merge_into(fixed.messages, msg("user", text("next")))
    assert check_anthropic(as_api(fixed.messages)) is None


def test_a_partly_answered_call_gets_the_rest_in_order() -> None:
    fixed = repair(
        [
            msg("user", text("go")),
            msg("assistant", use("a"), use("b"), use("c")),
            msg("user", result("b"), text("typed while tools ran")),
            msg("assistant", text("done")),
            msg("user", text("thanks")),
        ]
    )
    assert fixed.answered == ["a", "c"]
    assert [r.tool_use_id for r in fixed.messages[2].tool_results()] == ["a", "b", "c"]
    assert check_anthropic(as_api(fixed.messages)) is None


def test_stray_results_are_dropped_and_roles_kept_alternating() -> None:
    fixed = repair(
        [
            msg("assistant", text("orphan start")),
            msg("user", result("ghost")),
            msg("assistant", text("more")),
            msg("user", text("hello")),
        ]
    )
    assert fixed.dropped == ["ghost"]
    assert fixed.messages[0].text() == LOST_START_NOTE
    assert check_anthropic(as_api(fixed.messages)) is None
    assert not repair(fixed.messages).changed  # repairing twice changes nothing


def test_a_sound_conversation_is_left_alone() -> None:
    messages = [msg("user", text("go")), msg("assistant", use("a")), msg("user", result("a"))]
    fixed = repair(messages)
    assert not fixed.changed and fixed.messages == messages
    assert unanswered_tool_uses(messages) == []
    assert [u.id for u in unanswered_tool_uses(messages[:2])] == ["a"]
