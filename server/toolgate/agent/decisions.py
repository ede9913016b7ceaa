"""What people decided during a session — approvals and diff reviews — kept so a reopened session shows them.

The chat view draws an answered approval card ("Denied, with feedback: …") and an answered review card
("Accepted with your edits to …") live; the transcript keeps the same facts as structured records, and
`toolgate/chat/history` hands them back so the view can draw the cards again the same way. The recording is
done by wrapping the session's Approver: every answer (or withdrawal) passes through it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from toolgate.core.permission import (
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    FileProposal,
    ReviewAnswer,
    ReviewRequest,
    RuleScope,
)

if TYPE_CHECKING:  # the sidecar's protocol imports this module before initialize; the tool context is not needed
    from toolgate.core.context import ToolContext

AnsweredBy = Literal["user", "non_interactive", "unavailable", "withdrawn"]
"""Who settled it: a person; nobody could be asked (headless); the editor gave no usable answer; or the turn
ended while it waited (interrupted, the sidecar stopping)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    tool_use_id: str
    tool_name: str
    reason: str
    answered_by: AnsweredBy
    feedback: str | None = None
    # The person answered yes by switching the session to acceptEdits mode (settings/setMode naming the call)
    accepted_edits: bool = False


class SavedRule(BaseModel):
    """The "always allow" rule a person saved while the call waited (settings/addRule naming the call)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    rule: str
    scope: RuleScope
    covers_call: bool | None = None  # whether the rules in force then allowed the call itself


class ApprovalRecord(_Record):
    kind: Literal["approval"] = "approval"
    summary: str
    decision: Literal["allow", "deny"]
    saved_rule: SavedRule | None = None


class ReviewedPath(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    change: Literal["create", "modify", "delete"]


class ReviewRecord(_Record):
    kind: Literal["review"] = "review"
    title: str
    files: list[ReviewedPath]
    decision: Literal["accept", "reject"]
    edited: list[str] = Field(default_factory=list)  # paths the person changed before accepting


Decision = Annotated[ApprovalRecord | ReviewRecord, Field(discriminator="kind")]


def _change(proposal: FileProposal) -> Literal["create", "modify", "delete"]:
    if proposal.original is None:
        return "create"
    return "delete" if proposal.proposed is None else "modify"


def approval_record(request: ApprovalRequest, answer: ApprovalAnswer | None) -> ApprovalRecord:
    """`answer` None: the request was withdrawn before anyone answered."""
    asked = ApprovalRecord(
        tool_use_id=request.tool_use_id,
        tool_name=request.tool_name,
        summary=request.summary,
        reason=request.reason,
        answered_by="withdrawn",
        decision="deny",
    )
    if answer is None:
        return asked
    feedback = (answer.feedback or "").strip() or None
    return asked.model_copy(update={"answered_by": answer.reason, "decision": answer.decision, "feedback": feedback})


def review_record(request: ReviewRequest, answer: ReviewAnswer | None) -> ReviewRecord:
    files = [ReviewedPath(path=f.path, change=_change(f)) for f in request.files]
    base = {
        "tool_use_id": request.tool_use_id,
        "tool_name": request.tool_name,
        "reason": request.reason,
        "title": request.title,
        "files": files,
    }
    if answer is None:
        return ReviewRecord(**base, answered_by="withdrawn", decision="reject")
    proposed = {f.path: f.proposed for f in request.files}
    edited = [f.path for f in answer.files or [] if f.path in proposed and f.content != proposed[f.path]]
    return ReviewRecord(
        **base,
        answered_by=answer.reason,
        decision=answer.decision,
        feedback=(answer.feedback or "").strip() or None,
        edited=edited if answer.decision == "accept" else [],
    )


def _call_key(tool_name: str, tool_input: Mapping[str, Any]) -> str:
    return json.dumps([tool_name, tool_input], sort_keys=True, default=str)


class RecordingApprover:
    """An Approver that asks `inner` and hands every outcome to `record` (which must not raise)."""

    def __init__(self, inner: Approver, record: Callable[[ApprovalRecord | ReviewRecord], None]) -> None:
        self.inner = inner
        self._record = record
        self._saved: dict[str, SavedRule] = {}
        self._accepting_edits: set[str] = set()  # tool_use_ids

    def rule_saved(self, tool_name: str, tool_input: Mapping[str, Any], rule: SavedRule) -> None:
        """An "always allow" rule was saved for a waiting call; the allow that follows is recorded with it."""
        self._saved[_call_key(tool_name, tool_input)] = rule

    def accepting_edits(self, tool_use_id: str) -> None:
        """The session was switched to acceptEdits mode to answer a waiting call (an approval or a review); the yes
        that follows is recorded so."""
        self._accepting_edits.add(tool_use_id)

    def _answered_by_accepting_edits(self, tool_use_id: str) -> bool:
        found = tool_use_id in self._accepting_edits
        self._accepting_edits.discard(tool_use_id)
        return found

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        key = _call_key(request.tool_name, request.input)
        self._saved.pop(key, None)  # a rule saved for an earlier, identical call is not this one's
        try:
            answer = await self.inner.request(request, ctx)
        except anyio.get_cancelled_exc_class():
            self._saved.pop(key, None)
            self._answered_by_accepting_edits(request.tool_use_id)
            self._record(approval_record(request, None))
            raise
        record = approval_record(request, answer)
        saved = self._saved.pop(key, None)
        accepted_edits = self._answered_by_accepting_edits(request.tool_use_id)
        if answer.decision == "allow":
            record = record.model_copy(update={"saved_rule": saved, "accepted_edits": accepted_edits})
        self._record(record)
        return answer

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        try:
            answer = await self.inner.review(request, ctx)
        except anyio.get_cancelled_exc_class():
            self._answered_by_accepting_edits(request.tool_use_id)
            self._record(review_record(request, None))
            raise
        record = review_record(request, answer)
        if self._answered_by_accepting_edits(request.tool_use_id) and answer.decision == "accept":
            record = record.model_copy(update={"accepted_edits": True})
        self._record(record)
        return answer
