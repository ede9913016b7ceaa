"""What people decided during a session — approvals and diff reviews — kept so a reopened session shows them.

The chat view draws an answered approval card ("Denied, with feedback: …") and an answered review card
("Accepted with your edits to …") live; the transcript keeps the same facts as structured records, and
`toolgate/chat/history` hands them back so the view can draw the cards again the same way.

`Decisions` is the one place that records them: the runner asks the session's Approver through it, and what the
person did besides answering (saved an "always allow" rule, switched to acceptEdits mode) is noted on it by the
call's tool_use_id. Whoever keeps the records (the chat's transcript) listens to it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

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
    # Paths the person left as they were while accepting the rest: a new file not created, a deletion not made.
    skipped: list[str] = Field(default_factory=list)


Decision = Annotated[ApprovalRecord | ReviewRecord, Field(discriminator="kind")]


def _change(proposal: FileProposal) -> Literal["create", "modify", "delete"]:
    if proposal.original is None:
        return "create"
    return "delete" if proposal.proposed is None else "modify"


@dataclass(frozen=True, slots=True)
class Notes:
    """What the person did besides answering, recorded with a yes: saved an "always allow" rule for the call
    (settings/addRule naming it), or switched the session to acceptEdits mode to answer it (settings/setMode)."""

    saved_rule: SavedRule | None = None
    accepted_edits: bool = False


def approval_record(request: ApprovalRequest, answer: ApprovalAnswer | None, notes: Notes = Notes()) -> ApprovalRecord:
    """`answer` None: the request was withdrawn before anyone answered."""
    asked = ApprovalRecord(
        tool_use_id=request.tool_use_id,
        tool_name=request.tool_name,
        summary=request.headline(),
        reason=request.reason,
        answered_by="withdrawn",
        decision="deny",
    )
    if answer is None:
        return asked
    feedback = (answer.feedback or "").strip() or None
    update: dict[str, Any] = {"answered_by": answer.reason, "decision": answer.decision, "feedback": feedback}
    if answer.decision == "allow":
        update |= {"saved_rule": notes.saved_rule, "accepted_edits": notes.accepted_edits}
    return asked.model_copy(update=update)


def review_record(request: ReviewRequest, answer: ReviewAnswer | None, notes: Notes = Notes()) -> ReviewRecord:
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
    answered = [f for f in answer.files or [] if f.path in proposed]
    # A skipped file's content is ignored (it is not written), so it is neither edited nor accepted as proposed.
    edited = [f.path for f in answered if not f.skipped and f.content != proposed[f.path]]
    skipped = [f.path for f in answered if f.skipped]
    accepted = answer.decision == "accept"
    return ReviewRecord(
        **base,
        answered_by=answer.reason,
        decision=answer.decision,
        feedback=(answer.feedback or "").strip() or None,
        edited=edited if accepted else [],
        skipped=skipped if accepted else [],
        accepted_edits=accepted and notes.accepted_edits,
    )


DecisionRecord = ApprovalRecord | ReviewRecord
DecisionListener = Callable[[DecisionRecord], None]
RequestT = TypeVar("RequestT", ApprovalRequest, ReviewRequest)
AnswerT = TypeVar("AnswerT", ApprovalAnswer, ReviewAnswer)


class Decisions:
    """One session's record of what the person decided, keyed by the tool_use_id of the call it was about.

    Listeners hear every settled question (answered or withdrawn) and must not raise: keeping a record must never
    break the call it is about."""

    def __init__(self) -> None:
        self._listeners: list[DecisionListener] = []
        self._waiting: dict[str, ApprovalRequest | ReviewRequest] = {}
        self._saved: dict[str, SavedRule] = {}
        self._accepting_edits: set[str] = set()

    def listen(self, listener: DecisionListener) -> Callable[[], None]:
        """Hear every settled question from now on; call the returned function to stop."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def waiting_call(self, tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
        """The tool_use_id of the approval now waiting for this exact call (the latest asked), if one is."""
        for tool_use_id, request in reversed(self._waiting.items()):
            if isinstance(request, ApprovalRequest) and (request.tool_name, request.input) == (tool_name, tool_input):
                return tool_use_id
        return None

    def rule_saved(self, tool_use_id: str, rule: SavedRule) -> None:
        """An "always allow" rule was saved to answer the waiting call; its allow is recorded with the rule."""
        if tool_use_id in self._waiting:
            self._saved[tool_use_id] = rule

    def accepting_edits(self, tool_use_id: str) -> None:
        """The session was switched to acceptEdits mode to answer the waiting call (an approval or a review)."""
        if tool_use_id in self._waiting:
            self._accepting_edits.add(tool_use_id)

    async def ask(self, approver: Approver, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        """Ask `approver` and record the answer (or the withdrawal, when the turn ends while it waits)."""
        return await self._recorded(request, approver.request(request, ctx), approval_record)

    async def review(self, approver: Approver, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        """Ask `approver` for a diff review and record the answer (or the withdrawal)."""
        return await self._recorded(request, approver.review(request, ctx), review_record)

    async def _recorded(
        self,
        request: RequestT,
        asking: Awaitable[AnswerT],
        record: Callable[[RequestT, AnswerT | None, Notes], DecisionRecord],
    ) -> AnswerT:
        call = request.tool_use_id
        self._waiting[call] = request
        try:
            answer = await asking
        except BaseException as exc:
            notes = self._settle(call)
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                self._publish(record(request, None, notes))
            raise
        self._publish(record(request, answer, self._settle(call)))
        return answer

    def _settle(self, call: str) -> Notes:
        # The notes belong to this question only: a later call with the same id (a rerun) starts clean.
        self._waiting.pop(call, None)
        accepted = call in self._accepting_edits
        self._accepting_edits.discard(call)
        return Notes(self._saved.pop(call, None), accepted)

    def _publish(self, record: DecisionRecord) -> None:
        for listener in tuple(self._listeners):
            listener(record)
