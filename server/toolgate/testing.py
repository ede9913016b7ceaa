"""Small helpers for driving a runtime in tests and scripts (public, like a library's test utilities)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from toolgate.core.context import ToolContext
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.permission import ApprovalAnswer, ApprovalRequest, ReviewAnswer, ReviewedFile, ReviewRequest
from toolgate.runtime import Runtime

_ids = itertools.count()


def use(name: str, **tool_input: object) -> ToolUse:
    """A tool_use with a fresh id."""
    return ToolUse(id=f"toolu_{next(_ids):06d}", name=name, input=dict(tool_input))


async def run1(rt: Runtime, name: str, **tool_input: object) -> ToolResult:
    """Run one call as its own turn and return its result."""
    [result] = await rt.orchestrator.run_turn([use(name, **tool_input)])
    return result


@dataclass
class AllowingApprover:
    """Allows every approval request; answers a diff review with `reviewer` (default: accept as proposed).

    Every review request is kept in `reviews`, so a test can look at what the human would have seen.
    """

    reviewer: Callable[[ReviewRequest], ReviewAnswer] | None = None
    reviews: list[ReviewRequest] = field(default_factory=list)

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        return ApprovalAnswer(decision="allow")

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        self.reviews.append(request)
        return ReviewAnswer(decision="accept") if self.reviewer is None else self.reviewer(request)

    def accept_with(self, final: dict[str, str | None]) -> None:
        """Accept later reviews with the proposal for each named path (absolute, as proposed) replaced."""

        def answer(request: ReviewRequest) -> ReviewAnswer:
            files = [ReviewedFile(path=f.path, content=final[f.path]) for f in request.files if f.path in final]
            return ReviewAnswer(decision="accept", files=files)

        self.reviewer = answer
