"""Every exit of the runner gives exactly one tool_result with the call's id, and says which kind it is."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from tests.unit.core.tools_for_tests import BareTool, EchoTool, FailTool

from toolgate.core import tool as tool_module
from toolgate.core.context import ToolContext
from toolgate.core.decisions import DecisionRecord
from toolgate.core.errors import StateError
from toolgate.core.messages import ToolUse
from toolgate.core.permission import (
    ApprovalAnswer,
    ApprovalRequest,
    Decision,
    NonInteractiveApprover,
    PermissionMode,
    ReviewAnswer,
    ReviewRequest,
    RuleSuggestion,
)
from toolgate.core.tool import AnyTool, ToolInput
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import run1


def make(workspace: Path, **kwargs: Any) -> Runtime:
    kwargs.setdefault("approver", NonInteractiveApprover())
    approver = kwargs.pop("approver")
    return build_runtime(workspace, approver, RuntimeOptions(tools=[EchoTool(), BareTool(), FailTool()], **kwargs))


async def test_success_carries_the_id_and_no_error(workspace: Path) -> None:
    rt = make(workspace)
    [result] = await rt.orchestrator.run_turn([ToolUse(id="abc", name="Echo", input={"text": "hi", "count": 2})])
    assert (result.tool_use_id, result.content, result.is_error) == ("abc", "hihi", False)


async def test_alias_finds_the_tool(workspace: Path) -> None:
    result = await run1(make(workspace), "Say", text="via alias")
    assert result.content == "via alias"


async def test_unknown_tool_names_the_available_tools(workspace: Path) -> None:
    [result] = await make(workspace).orchestrator.run_turn([ToolUse(id="u1", name="Grep", input={})])
    assert result.is_error and result.tool_use_id == "u1"
    assert 'kind="unknown_tool"' in result.text()
    assert "'Grep'" in result.text()
    assert "Bare, Echo, Fail" in result.text()  # sorted, every tool named


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({}, "the required parameter `where` is missing"),
        ({"where": "x", "colour": "red"}, "`colour` is not a parameter of this tool"),
        ({"where": 7}, "`where` should be a string, but got an integer (7)"),
    ],
)
async def test_schema_failures_name_the_field_in_plain_words(
    workspace: Path, tool_input: dict[str, Any], expected: str
) -> None:
    result = await run1(make(workspace), "Fail", **tool_input)
    assert result.is_error
    text = result.text()
    assert 'kind="invalid_input"' in text
    assert expected in text
    assert "Fail accepts: where." in text
    assert "pydantic" not in text.lower() and "errors.pydantic.dev" not in text


async def test_wrong_type_reports_expected_and_got(workspace: Path) -> None:
    result = await run1(make(workspace), "Echo", text="x", count="many")
    assert '`count` should be an integer, but got a string ("many")' in result.text()


@pytest.mark.parametrize(
    ("value", "shown"), [("3", 'a string ("3")'), (3.0, "a number (3.0)"), (True, "a boolean (true)")]
)
async def test_integers_are_strict(workspace: Path, value: object, shown: str) -> None:
    # Issue 13: no guessing what a model meant; the error names the field and what it got.
    result = await run1(make(workspace), "Echo", text="a", count=value)
    assert result.is_error and 'kind="invalid_input"' in result.text()
    assert f"`count` should be an integer, but got {shown}" in result.text()


def test_strict_scalars_are_worked_out_once_per_model_field_and_each_model_keeps_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The kind of a field (bool, int, float or neither) was worked out of its annotation for every field of every
    # call: most of a small input's validation.
    asked: list[Any] = []
    real = tool_module._scalar_kind
    monkeypatch.setattr(tool_module, "_scalar_kind", lambda annotation: asked.append(annotation) or real(annotation))

    class Counted(ToolInput):
        n: int
        on: bool | None = None

    class Loose(Counted):
        n: str  # type: ignore[assignment]  # the same field name, another kind: its own answer

    for _ in range(3):
        assert Counted.model_validate({"n": 3, "on": True}).n == 3
        with pytest.raises(ValidationError, match="valid integer"):
            Counted.model_validate({"n": "3"})
        with pytest.raises(ValidationError, match="valid boolean"):
            Counted.model_validate({"n": 3, "on": 1})
        assert Loose.model_validate({"n": "3"}).n == "3"
    assert sorted(map(str, asked)) == sorted(map(str, [int, bool | None, str]))


async def test_integers_are_accepted_as_integers(workspace: Path) -> None:
    assert (await run1(make(workspace), "Echo", text="a", count=3)).content == "aaa"


async def test_input_that_is_not_an_object(workspace: Path) -> None:
    [result] = await make(workspace).orchestrator.run_turn([ToolUse(id="x", name="Echo", input=["a"])])
    assert result.is_error and "must be a JSON object" in result.text()


async def test_state_failure_is_marked_as_state(workspace: Path) -> None:
    result = await run1(make(workspace), "Fail", where="state")
    assert result.is_error
    assert 'kind="state"' in result.text() and "look again" in result.text()


@pytest.mark.parametrize(("where", "message"), [("validate", "validator exploded"), ("call", "secret internal detail")])
async def test_exceptions_give_the_message_and_log_the_traceback(
    workspace: Path, caplog: pytest.LogCaptureFixture, where: str, message: str
) -> None:
    with caplog.at_level(logging.ERROR, logger="toolgate"):
        result = await run1(make(workspace), "Fail", where=where)
    assert result.is_error and 'kind="failed"' in result.text() and message in result.text()
    assert "Traceback" not in result.text()
    assert any(r.exc_info for r in caplog.records), "the traceback must reach the log"


async def test_an_exception_while_mapping_the_result_is_a_failure(workspace: Path) -> None:
    result = await run1(make(workspace), "Fail", where="map")
    assert result.is_error and "mapping broke" in result.text()


async def test_empty_output_gets_an_explicit_notice(workspace: Path) -> None:
    result = await run1(make(workspace), "Fail", where="empty")
    assert not result.is_error and result.content == "(Fail finished with no output.)"


async def test_rendered_error_keeps_its_output(workspace: Path) -> None:
    result = await run1(make(workspace), "Fail", where="rendered-error")
    assert result.is_error and result.content == "exit 3: it failed but here is output"


async def test_a_tool_that_answers_nothing_needs_approval(workspace: Path) -> None:
    """Fail-closed defaults: not read-only, so the default mode asks, and headless asks are refused."""
    result = await run1(make(workspace), "Bare")
    assert result.is_error and 'kind="permission"' in result.text()
    assert "non-interactive" in result.text() and "--allow 'Bare'" in result.text()
    assert (await run1(make(workspace, mode=PermissionMode.BYPASS), "Bare")).content == "bare ran"


class _FixedPolicy:
    def __init__(self, decision: Decision | Exception) -> None:
        self.decision = decision

    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        if isinstance(self.decision, Exception):
            raise self.decision
        return self.decision


class _RecordingApprover:
    def __init__(self, answer: ApprovalAnswer) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        self.requests.append(request)
        return self.answer

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        raise AssertionError("no file proposals here")


async def test_deny_says_which_rule_and_does_not_run(workspace: Path) -> None:
    policy = _FixedPolicy(Decision(behavior="deny", reason="echoing is forbidden here", rule="Echo"))
    result = await run1(make(workspace, policy=policy), "Echo", text="x")
    assert result.is_error and 'kind="permission"' in result.text()
    assert "echoing is forbidden here" in result.text() and "`Echo`" in result.text()


async def test_ask_goes_to_the_approver_with_reason_summary_and_suggestions(workspace: Path) -> None:
    suggestion = RuleSuggestion(rule="Echo", scope="project")
    policy = _FixedPolicy(Decision(behavior="ask", reason="needs a human", suggestions=[suggestion]))
    approver = _RecordingApprover(ApprovalAnswer(decision="allow"))
    rt = make(workspace, policy=policy, approver=approver)
    result = await run1(rt, "Echo", text="ok")
    assert result.content == "ok"
    [request] = approver.requests
    assert request.reason == "needs a human" and request.suggestions == [suggestion]
    assert request.tool_name == "Echo" and request.input == {"text": "ok", "count": 1}
    assert request.session_id == rt.session.id


async def test_every_answer_is_recorded_by_the_sessions_decisions_keyed_by_the_call(workspace: Path) -> None:
    policy = _FixedPolicy(Decision(behavior="ask", reason="needs a human"))
    approver = _RecordingApprover(ApprovalAnswer(decision="allow"))
    rt = make(workspace, policy=policy, approver=approver)
    records: list[DecisionRecord] = []
    rt.session.decisions.listen(records.append)

    async def answer_after_switching(request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        if request.tool_use_id == "u1":
            rt.session.decisions.accepting_edits("u2")  # not asked yet: not its answer
            rt.session.decisions.accepting_edits("u1")  # what settings/setMode does for the waiting call
        return ApprovalAnswer(decision="allow")

    approver.request = answer_after_switching  # type: ignore[method-assign]
    [first, second] = await rt.orchestrator.run_turn(
        [ToolUse(id="u1", name="Echo", input={"text": "a"}), ToolUse(id="u2", name="Echo", input={"text": "a"})]
    )
    assert not first.is_error and not second.is_error
    assert [(r.kind, r.tool_use_id, r.decision, r.accepted_edits) for r in records] == [
        ("approval", "u1", "allow", True),
        ("approval", "u2", "allow", False),
    ]
    assert rt.session.approver is approver  # recorded beside the approver, never by replacing it


async def test_user_denial_with_feedback_reaches_the_model(workspace: Path) -> None:
    policy = _FixedPolicy(Decision(behavior="ask", reason="needs a human"))
    approver = _RecordingApprover(ApprovalAnswer(decision="deny", feedback="use the staging copy instead"))
    result = await run1(make(workspace, policy=policy, approver=approver), "Echo", text="x")
    assert result.is_error and "The user said: use the staging copy instead" in result.text()


async def test_a_policy_that_throws_asks_instead_of_allowing(workspace: Path) -> None:
    approver = _RecordingApprover(ApprovalAnswer(decision="deny"))
    rt = make(workspace, policy=_FixedPolicy(RuntimeError("rule file vanished")), approver=approver)
    result = await run1(rt, "Echo", text="x")
    assert result.is_error
    assert "could not decide (rule file vanished)" in approver.requests[0].reason


async def test_updated_input_from_the_policy_is_validated_and_used(workspace: Path) -> None:
    policy = _FixedPolicy(Decision(behavior="allow", reason="hook rewrote it", updated_input={"text": "new"}))
    assert (await run1(make(workspace, policy=policy), "Echo", text="old")).content == "new"
    bad = _FixedPolicy(Decision(behavior="allow", reason="hook broke it", updated_input={"nope": 1}))
    result = await run1(make(workspace, policy=bad), "Echo", text="old")
    assert result.is_error and 'kind="invalid_input"' in result.text()


async def test_descriptions_are_computed_from_the_context(workspace: Path) -> None:
    rt = make(workspace, mode=PermissionMode.PLAN)
    definitions = rt.registry.definitions(rt.runner.describe_context())
    echo = next(d for d in definitions if d.name == "Echo")
    assert echo.description == "Echo text back (mode plan)."
    assert echo.input_schema["additionalProperties"] is False
    assert "title" not in echo.input_schema


class _BrokenProposal(EchoTool):
    name = "BrokenProposal"
    aliases = ()

    def __init__(self, failure: Exception) -> None:
        self.failure = failure

    async def propose(self, tool_input: Any, ctx: ToolContext) -> Any:
        raise self.failure


@pytest.mark.parametrize(
    ("failure", "kind", "text"),
    [
        (StateError("the file changed under you; Read it again"), "state", "Read it again"),
        (RuntimeError("proposal bug"), "failed", "RuntimeError: proposal bug"),
    ],
)
async def test_a_failing_proposal_ends_only_its_own_call(
    workspace: Path, failure: Exception, kind: str, text: str
) -> None:
    policy = _FixedPolicy(Decision(behavior="ask", reason="needs review"))
    rt = build_runtime(
        workspace, NonInteractiveApprover(), RuntimeOptions(policy=policy, tools=[EchoTool(), _BrokenProposal(failure)])
    )
    broken, fine = await rt.orchestrator.run_turn(
        [ToolUse(id="a", name="BrokenProposal", input={"text": "x"}), ToolUse(id="b", name="Say", input={"text": "y"})]
    )
    assert broken.is_error and f'kind="{kind}"' in broken.text() and text in broken.text()
    assert fine.tool_use_id == "b" and fine.is_error  # asked, and refused headless: but answered
