"""What the pinning tests share: a policy that asks about every call inside the workspace, an approver that swaps
a folder for a symbolic link before it says yes (as a background command would), and that swap."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from toolgate.core.context import ToolContext
from toolgate.core.paths import is_within, real_path
from toolgate.core.permission import ApprovalAnswer, ApprovalRequest, Decision, ReviewAnswer, ReviewRequest
from toolgate.core.tool import AnyTool


class InsideAsks:
    """Asks about a call whose every path really lies inside the workspace; denies any other."""

    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        for path in tool.paths(tool_input, ctx):
            if not is_within(Path(real_path(path)), Path(real_path(ctx.workspace))):
                return Decision(behavior="deny", reason=f"{path} is outside the workspace")
        return Decision(behavior="ask", reason="the person decides", offers_accept_edits=True)


@dataclass
class SwappingApprover:
    """Says yes to everything; the next answer is given only after `swap` ran (then it is forgotten)."""

    swap: Callable[[], None] | None = None

    def _swap_first(self) -> None:
        swap, self.swap = self.swap, None
        if swap is not None:
            swap()

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        self._swap_first()
        return ApprovalAnswer(decision="allow")

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        self._swap_first()
        return ReviewAnswer(decision="accept")


def swap_for_link(folder: Path, to: Path) -> Callable[[], None]:
    """What the background command does: `mv d d.x; ln -s <to> d`."""

    def swap() -> None:
        folder.rename(folder.with_name(folder.name + ".x"))
        folder.symlink_to(to, target_is_directory=True)

    return swap
