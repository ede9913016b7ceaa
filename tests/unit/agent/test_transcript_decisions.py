"""Approval and review outcomes in the transcript: recorded by the session's Decisions as answered, read back in
order, old files still load."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from toolgate.agent.conversation import ChatMessage
from toolgate.agent.transcript import MessageEntry, Transcript, load_transcript
from toolgate.core.context import ToolContext
from toolgate.core.decisions import ApprovalRecord, Decisions, ReviewRecord, SavedRule
from toolgate.core.permission import (
    ApprovalAnswer,
    ApprovalRequest,
    FileProposal,
    ReviewAnswer,
    ReviewedFile,
    ReviewRequest,
)

APPROVAL = ApprovalRequest(
    session_id="s", tool_use_id="t1", tool_name="Bash", input={"command": "rm x"}, summary="rm x", reason="deletes"
)
REVIEW = ReviewRequest(
    session_id="s",
    tool_use_id="t2",
    tool_name="Edit",
    title="Edit a.py",
    reason="edits need approval",
    files=[
        FileProposal(path="/w/a.py", original="a\n", proposed="b\n"),
        FileProposal(path="/w/new.py", original=None, proposed="n\n"),
    ],
)


class Answers:
    """An Approver with fixed answers; `block` makes it wait until the turn is cancelled."""

    def __init__(self, approval: ApprovalAnswer, review: ReviewAnswer, block: bool = False) -> None:
        self.approval, self.review_answer, self.block = approval, review, block

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        if self.block:
            await anyio.sleep_forever()
        return self.approval

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        if self.block:
            await anyio.sleep_forever()
        return self.review_answer


def recorder(path: Path) -> tuple[Transcript, Decisions]:
    transcript, decisions = Transcript(path), Decisions()
    decisions.listen(transcript.record_decision)
    return transcript, decisions


def save_rule(decisions: Decisions, tool: str, tool_input: dict[str, str], rule: SavedRule) -> None:
    """What settings/addRule does for the call it names: the waiting approval of that call, if one waits."""
    waiting = decisions.waiting_call(tool, tool_input)
    if waiting is not None:
        decisions.rule_saved(waiting, rule)


CTX = ToolContext.__new__(ToolContext)  # Decisions never looks at the context; it only passes it on


async def test_answers_are_recorded_and_read_back_in_order(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    edited = [ReviewedFile(path="/w/a.py", content="mine\n"), ReviewedFile(path="/w/new.py", content="n\n")]
    inner = Answers(
        ApprovalAnswer(decision="deny", feedback="  use make clean "), ReviewAnswer(decision="accept", files=edited)
    )
    transcript, decisions = recorder(path)
    transcript.append(MessageEntry(message=ChatMessage.model_validate({"role": "user", "content": []})))
    assert (await decisions.ask(inner, APPROVAL, CTX)).decision == "deny"
    assert (await decisions.review(inner, REVIEW, CTX)).decision == "accept"
    transcript.close()

    loaded = load_transcript(path)
    approval, review = loaded.decisions
    assert isinstance(approval, ApprovalRecord) and isinstance(review, ReviewRecord)
    assert (approval.tool_use_id, approval.decision, approval.answered_by) == ("t1", "deny", "user")
    assert approval.feedback == "use make clean" and approval.summary == "rm x"
    assert [(f.path, f.change) for f in review.files] == [("/w/a.py", "modify"), ("/w/new.py", "create")]
    assert review.edited == ["/w/a.py"]  # new.py was accepted as proposed
    assert loaded.unreadable_lines == []


async def test_a_file_left_out_of_an_accepted_review_is_recorded_as_skipped_not_edited(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    patch = REVIEW.model_copy(
        update={"files": [*REVIEW.files, FileProposal(path="/w/old.py", original="o\n", proposed=None)]}
    )
    answered = [
        ReviewedFile(path="/w/a.py", content="b\n"),
        ReviewedFile(path="/w/new.py", content=None, skipped=True),
        ReviewedFile(path="/w/old.py", content=None, skipped=True),
    ]
    inner = Answers(ApprovalAnswer(decision="allow"), ReviewAnswer(decision="accept", files=answered))
    transcript, decisions = recorder(path)
    await decisions.review(inner, patch, CTX)
    transcript.close()
    [review] = load_transcript(path).decisions
    assert isinstance(review, ReviewRecord)
    # new.py was not created and old.py was not deleted: neither was written, edited or not.
    assert (review.edited, review.skipped) == ([], ["/w/new.py", "/w/old.py"])


async def test_a_question_withdrawn_by_cancelling_the_turn_is_recorded_as_withdrawn(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    inner = Answers(ApprovalAnswer(decision="allow"), ReviewAnswer(decision="accept"), block=True)
    transcript, decisions = recorder(path)
    async with anyio.create_task_group() as group:

        async def ask() -> None:
            await decisions.ask(inner, APPROVAL, CTX)
            pytest.fail("the question was answered though nobody answered it")

        group.start_soon(ask)
        await anyio.wait_all_tasks_blocked()
        group.cancel_scope.cancel()
    transcript.close()
    [record] = load_transcript(path).decisions
    assert isinstance(record, ApprovalRecord) and record.answered_by == "withdrawn"


async def test_a_rejection_records_no_edits_and_the_reason_nobody_answered(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    inner = Answers(
        ApprovalAnswer(decision="deny", reason="unavailable"),
        ReviewAnswer(decision="reject", feedback="no", files=[ReviewedFile(path="/w/a.py", content="x\n")]),
    )
    transcript, decisions = recorder(path)
    await decisions.ask(inner, APPROVAL, CTX)
    await decisions.review(inner, REVIEW, CTX)
    transcript.close()
    approval, review = load_transcript(path).decisions
    assert approval.answered_by == "unavailable"
    assert isinstance(review, ReviewRecord) and review.edited == [] and review.feedback == "no"


def test_a_transcript_from_before_decisions_were_recorded_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    hello = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    old = {"type": "message", "at": "2026-01-01T00:00:00Z", "message": hello}
    path.write_text(json.dumps(old) + "\n")
    loaded = load_transcript(path)
    assert loaded.decisions == [] and len(loaded.messages) == 1 and loaded.unreadable_lines == []


async def test_an_allow_after_a_rule_was_saved_for_the_call_records_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    inner = Answers(ApprovalAnswer(decision="allow"), ReviewAnswer(decision="accept"))
    transcript, decisions = recorder(path)
    saved = SavedRule(rule="Bash(rm:*)", scope="local", covers_call=True)

    save_rule(decisions, "Bash", {"command": "rm x"}, saved)  # before the call was asked: not its rule
    await decisions.ask(inner, APPROVAL, CTX)

    async def answer_after_saving(request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        # The editor saves the rule (settings/addRule names the waiting call), then answers the request.
        save_rule(decisions, "Bash", {"command": "other"}, saved)  # another call's
        save_rule(decisions, "Bash", {"command": "rm x"}, saved)
        return ApprovalAnswer(decision="allow")

    inner.request = answer_after_saving  # type: ignore[method-assign]
    await decisions.ask(inner, APPROVAL.model_copy(update={"tool_use_id": "t3"}), CTX)
    transcript.close()
    first, second = load_transcript(path).decisions
    assert isinstance(first, ApprovalRecord) and first.saved_rule is None
    assert isinstance(second, ApprovalRecord) and second.saved_rule == saved


async def test_an_allow_after_the_mode_was_switched_for_the_call_records_accepted_edits(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    inner = Answers(ApprovalAnswer(decision="allow"), ReviewAnswer(decision="accept"))
    transcript, decisions = recorder(path)

    await decisions.ask(inner, APPROVAL, CTX)

    async def answer_after_switching(request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        decisions.accepting_edits("t9")  # another call's
        decisions.accepting_edits("t3")
        return ApprovalAnswer(decision="allow")

    inner.request = answer_after_switching  # type: ignore[method-assign]
    await decisions.ask(inner, APPROVAL.model_copy(update={"tool_use_id": "t3"}), CTX)
    transcript.close()
    first, second = load_transcript(path).decisions
    assert isinstance(first, ApprovalRecord) and first.accepted_edits is False
    assert isinstance(second, ApprovalRecord) and second.accepted_edits is True

    async def accept_after_switching(request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        decisions.accepting_edits(request.tool_use_id)
        return ReviewAnswer(decision="accept")

    transcript, decisions = recorder(tmp_path / "reviews.jsonl")
    inner.review = accept_after_switching  # type: ignore[method-assign]
    await decisions.review(inner, REVIEW, CTX)
    transcript.close()
    [reviewed] = load_transcript(tmp_path / "reviews.jsonl").decisions
    assert isinstance(reviewed, ReviewRecord) and reviewed.accepted_edits is True
