"""Compaction's pure parts: the threshold, where the cut falls, and the shape of what is sent."""

from __future__ import annotations

import pytest

from toolgate.agent import compaction_plan as plan
from toolgate.agent.conversation import ChatMessage, repair, user_text
from toolgate.core.messages import TextBlock, ToolResult, ToolUse


def exchange(n: int, size: int = 2_000) -> list[ChatMessage]:
    return [
        ChatMessage(role="assistant", content=[ToolUse(id=f"t{n}", name="Read", input={"file_path": f"{n}.txt"})]),
        ChatMessage(role="user", content=[ToolResult(tool_use_id=f"t{n}", content="x" * size)]),
    ]


def session(exchanges: int) -> list[ChatMessage]:
    messages = [user_text("fix the parser")]
    for n in range(1, exchanges + 1):
        messages += exchange(n)
    return messages


@pytest.mark.parametrize(("tokens", "due"), [(79_999, False), (80_000, True), (120_000, True)])
def test_the_threshold_is_a_share_of_the_window(tokens: int, due: bool) -> None:
    assert plan.should_compact(tokens, 100_000) is due


def test_the_cut_keeps_what_fits_and_always_the_latest_exchange() -> None:
    messages = session(6)
    one = plan.message_tokens(messages[1]) + plan.message_tokens(messages[2])
    assert plan.cut_index(messages, 0) == 11  # the last assistant message: one exchange kept
    assert plan.cut_index(messages, 3 * one) == 7  # three exchanges fit
    assert plan.cut_index(messages, 10**9) == 3  # everything fits, but the first exchange is still summarised
    assert plan.cut_index(session(1), 0) is None  # nothing before the latest exchange


def test_every_cut_keeps_each_tool_use_with_its_result() -> None:
    messages = session(5)
    for keep in range(0, 20_000, 500):
        cut = plan.cut_index(messages, keep)
        assert cut is not None
        head = plan.summary_message("## Goal and constraints\nfix it", cut, plan.latest_prompt(messages[:cut]))
        attached = [
            (ToolUse(id="r1", name="Read", input={"file_path": "a"}), ToolResult(tool_use_id="r1", content="a"))
        ]
        for reattached in ([], attached):
            compacted = plan.compacted(head, reattached, messages[cut:])
            assert not repair(compacted).changed  # pairing and alternation as every API wants them
            assert [m.role for m in compacted[:2]] == ["user", "assistant"]


def test_the_summary_request_asks_for_every_section_and_carries_no_tool_blocks() -> None:
    messages = [*session(2), ChatMessage(role="assistant", content=[TextBlock(text="Found the bug in 2.txt.")])]
    transcript = plan.render_for_summary(messages, max_chars=100_000)
    assert "CALL Read" in transcript and "ASSISTANT: Found the bug" in transcript
    assert "more characters]" in transcript  # long outputs are cut to their start
    instruction = plan.summary_instruction(transcript, "- [pending] add a test", "the parser")
    assert all(f"## {section}" in instruction for section in plan.SECTIONS)
    assert "focus on: the parser" in instruction and "add a test" in instruction
    assert plan.missing_sections("## Goal and constraints\n## Decisions") == list(plan.SECTIONS[2:])


def test_an_over_long_session_loses_its_middle_in_the_summary_request() -> None:
    messages = [user_text("GOAL " + "a" * 5_000), user_text("b" * 5_000), user_text("c" * 5_000 + " LATEST")]
    text = plan.render_for_summary(messages, max_chars=3_000)
    assert len(text) < 3_200 and text.startswith("USER: GOAL") and text.endswith("LATEST")
