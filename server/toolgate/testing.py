"""Small helpers for driving a runtime in tests and scripts (public, like a library's test utilities)."""

from __future__ import annotations

import itertools

from toolgate.core.messages import ToolResult, ToolUse
from toolgate.runtime import Runtime

_ids = itertools.count()


def use(name: str, **tool_input: object) -> ToolUse:
    """A tool_use with a fresh id."""
    return ToolUse(id=f"toolu_{next(_ids):06d}", name=name, input=dict(tool_input))


async def run1(rt: Runtime, name: str, **tool_input: object) -> ToolResult:
    """Run one call as its own turn and return its result."""
    [result] = await rt.run_turn([use(name, **tool_input)])
    return result
