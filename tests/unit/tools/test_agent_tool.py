"""The Agent tool's result: the child's answer, capped with the cap announced, and an unfinished child said so."""

from __future__ import annotations

from typing import Any, cast

from toolgate.core.context import ToolContext
from toolgate.tools.agent import MAX_ANSWER_CHARS, AgentTool, SubagentAnswer, SubagentLauncher

TOOL = AgentTool(cast(SubagentLauncher, object()))
CTX = cast(ToolContext, None)


def _result(text: str, stop: str = "end_turn") -> Any:
    return TOOL.to_result(SubagentAnswer(agent_type="explore", text=text, stop_reason=stop), CTX)


def test_a_long_answer_is_cut_and_the_cut_is_announced() -> None:
    rendered = _result("x" * (MAX_ANSWER_CHARS + 5))
    assert rendered.content.startswith("x" * MAX_ANSWER_CHARS) and not rendered.is_error
    assert f"cut at {MAX_ANSWER_CHARS} characters of {MAX_ANSWER_CHARS + 5}" in rendered.content
    assert _result("short").content == "short"


def test_a_child_that_did_not_finish_is_an_error_that_says_why() -> None:
    rendered = _result("halfway", "interrupted")
    assert (
        rendered.is_error and rendered.content == "[The explore subagent was interrupted; what it said last:]\nhalfway"
    )
