"""The editor as the session's Approver: approvals and diff reviews are requests sent to the client.

The runner asks (`Approver.request` / `Approver.review`) and awaits; this module turns that into a
server→client JSON-RPC request and the answer back into the runner's vocabulary. Whenever the editor
cannot give a usable answer — it disconnected, it answered with an error, with something that does not
fit the protocol or that cannot be read at all, or not within the deadline (`editorAnswerTimeoutSeconds`) —
the answer is "no" with reason "unavailable": nobody approved, so nothing runs, and the session goes on.
When the turn itself is cancelled while a question is pending, the question is withdrawn and the call's
result says it was waiting for approval (not that it may have partly run).

While a card waits, the session's Notification hooks run (`PermissionEngine.notify`); an answer that arrives first
stops them, since nothing waits any more.

"Always allow" is not part of an answer: the editor first saves the rule (`toolgate/settings/addRule`, which
also says whether the rule covers the waiting call), then answers a plain allow.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

import anyio

from toolgate.core.errors import ErrorKind, format_error
from toolgate.core.permission import (
    ApprovalAnswer,
    ApprovalRequest,
    ReviewAnswer,
    ReviewRequest,
)
from toolgate.sidecar.protocol import (
    APPROVAL_REQUEST,
    DIFF_REVIEW,
    ApprovalParams,
    ApprovalResult,
    DiffReviewParams,
    DiffReviewResult,
    WireModel,
)

if TYPE_CHECKING:  # annotations only: the server builds its approver before initialize
    from toolgate.core.context import ToolContext

logger = logging.getLogger("toolgate.sidecar.approvals")

ResultT = TypeVar("ResultT", bound=WireModel)
T = TypeVar("T")


class ClientUnavailable(Exception):
    """The editor could not give a usable answer (disconnected, refused, or answered off-protocol)."""


class ClientChannel(Protocol):
    async def request(self, method: str, params: WireModel, result: type[ResultT]) -> ResultT:
        """Send a request to the editor and wait for its answer; raise ClientUnavailable when there is none."""
        ...


class EditorApprover:
    """Implements `toolgate.core.permission.Approver` by asking the editor. One instance serves every session."""

    def __init__(self, channel: ClientChannel) -> None:
        self._channel = channel

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        params = ApprovalParams.model_validate(request.model_dump())  # the same fields, camelCase on the wire
        waiting = f"{request.tool_name} waits for your approval: {request.headline()}"
        try:
            answer = await _notifying(
                ctx,
                "approval",
                request.tool_name,
                waiting,
                lambda: self._ask(APPROVAL_REQUEST, params, ApprovalResult, ctx),
            )
        except ClientUnavailable as exc:
            logger.warning("approval for %s (%s) not given: %s", request.tool_name, request.tool_use_id, exc)
            return ApprovalAnswer(decision="deny", reason="unavailable")
        return ApprovalAnswer(decision=answer.decision, feedback=answer.feedback)

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        params = DiffReviewParams.model_validate(request.model_dump())
        waiting = f"{request.title} waits for your review"
        try:
            review = functools.partial(self._ask, DIFF_REVIEW, params, DiffReviewResult, ctx)
            answer = await _notifying(ctx, "review", request.tool_name, waiting, review)
        except ClientUnavailable as exc:
            logger.warning("diff review of %s (%s) not done: %s", request.tool_name, request.tool_use_id, exc)
            return ReviewAnswer(decision="reject", reason="unavailable")
        proposed = {f.path: f.proposed for f in request.files}
        unknown = [f.path for f in answer.files or [] if f.path not in proposed]
        if unknown:
            # Content for a file nobody proposed to change would be written by no one; say so in the log.
            logger.warning("diff review answer names files that were not proposed (ignored): %s", unknown)
        erased = [
            f.path
            for f in answer.files or []
            if f.content is None and not f.skipped and f.path in proposed and proposed[f.path] is not None
        ]
        if erased and answer.decision == "accept":
            # null content means "delete"; for a file the tool meant to keep, that is a broken answer, not a wish.
            logger.warning("diff review answer would delete files that were to be edited (refused): %s", erased)
            return ReviewAnswer(decision="reject", reason="unavailable")
        return ReviewAnswer(decision=answer.decision, files=answer.files, feedback=answer.feedback, notes=answer.notes)

    async def _ask(self, method: str, params: WireModel, result: type[ResultT], ctx: ToolContext) -> ResultT:
        try:
            return await self._channel.request(method, params, result)
        except anyio.get_cancelled_exc_class():
            ctx.partial_result = format_error(
                ErrorKind.PERMISSION,
                "The turn was interrupted while this call was waiting for the user's approval, so it did not run.",
            )
            raise
        except ClientUnavailable:
            raise
        except Exception as exc:
            # Whatever else went wrong, nobody approved: fail closed, and keep the session going.
            logger.exception("asking the editor (%s) failed", method)
            raise ClientUnavailable(f"asking the editor failed: {type(exc).__name__}") from None


async def _notifying(
    ctx: ToolContext,
    kind: Literal["approval", "review"],
    tool_name: str,
    message: str,
    waiting: Callable[[], Awaitable[T]],
) -> T:
    """Wait for the person's answer while the Notification hooks run; the answer stops hooks still running."""
    # The engine's `notify` (permissions/decide.py), looked up rather than imported: this module is loaded before
    # initialize is answered, the permission engine only when a session opens.
    notify = getattr(ctx.session.policy, "notify", None)
    if notify is None:
        return await waiting()
    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(notify, ctx, kind, tool_name, message)
        try:
            answer = await waiting()
        except Exception as exc:  # raised below, not wrapped in the task group's exception group
            failure = exc
        group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return answer
