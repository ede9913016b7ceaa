"""The minimal permission policy: bypass allows everything; otherwise read-only calls inside the working
directories run and everything else needs approval.

It is deliberately small but real (it fails closed); the rule-based engine replaces it.
"""

from __future__ import annotations

from pydantic import BaseModel

from toolgate.core.context import ToolContext
from toolgate.core.paths import inside_any
from toolgate.core.permission import Decision, PermissionMode, RuleSuggestion
from toolgate.core.tool import AnyTool


class BasicPolicy:
    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        if ctx.mode is PermissionMode.BYPASS:
            return Decision(behavior="allow", reason="bypassPermissions mode allows every call")
        check = await tool.check_permissions(tool_input, ctx)
        if check.behavior == "deny":
            return Decision(behavior="deny", reason=check.reason or f"{tool.name} refused this call")
        if check.behavior == "allow":
            return Decision(behavior="allow", reason=check.reason or f"{tool.name} allowed this call")
        if check.behavior == "ask":
            return Decision(behavior="ask", reason=check.reason, suggestions=check.suggestions)

        try:
            read_only = tool.is_read_only(tool_input)
        except Exception:
            read_only = False  # a classifier that throws has not shown the call is harmless
        paths = list(tool.paths(tool_input, ctx))
        outside = [p for p in paths if not inside_any(p, ctx.working_dirs)]
        if read_only and not outside:
            return Decision(behavior="allow", reason="read-only, and inside the working directories")
        if read_only:
            directory = outside[0].parent
            return Decision(
                behavior="ask",
                reason=f"it reads {outside[0]}, which is outside the working directories",
                suggestions=[RuleSuggestion(rule=f"{tool.name}(/{directory}/**)", scope="session")],
            )
        return Decision(
            behavior="ask",
            reason=f"{tool.name} can change files or run commands, and no rule allows this call",
            suggestions=[RuleSuggestion(rule=tool.name, scope="session")],
        )
