"""A step a session may add around each call that may change files: it looks before the call runs and may add a
note to the result after (the editor's problems step, `toolgate.sidecar.problems`). Core knows no editor and no
tool: whoever installs the follower decides which calls it follows. Headless sessions have none.

A follower never decides anything about the call: it is asked after the permission step, and whatever it does (or
fails to do) the call's own result stands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from toolgate.core.deps import Dep
from toolgate.core.messages import TextBlock, ToolResult, ToolResultContent

if TYPE_CHECKING:
    from toolgate.core.context import ToolContext
    from toolgate.core.tool import AnyTool, ToolInput


class FollowedCall(Protocol):
    async def after(self, result: ToolResult) -> str | None:
        """Called once the call and its PostToolUse hooks are done: a note for the end of its result, or None."""
        ...


class ChangeFollower(Protocol):
    async def before(self, tool: AnyTool, tool_input: ToolInput, ctx: ToolContext) -> FollowedCall | None:
        """Called right before a call that may change files runs; None: this call is not followed."""
        ...


CHANGE_FOLLOWER: Dep[ChangeFollower | None] = Dep("change_follower", lambda _r: None)


def with_note(result: ToolResult, note: str) -> ToolResult:
    """The result with `note` at its end, after everything the tool (and its hooks) said."""
    if isinstance(result.content, str):
        content: ToolResultContent = f"{result.content}\n\n{note}"
        return result.model_copy(update={"content": content})
    return result.model_copy(update={"content": [*result.content, TextBlock(text=note)]})
