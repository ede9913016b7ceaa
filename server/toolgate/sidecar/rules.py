"""What "always allow" does until the permission engine (toolgate.permissions, issue 6) is wired in.

This is deliberately narrow, and fails closed: it remembers only whole-tool rules (`Edit`, not
`Bash(git log:*)`) and only for the session's lifetime, which is exactly what the minimal policy suggests.
Any other rule is logged as not kept, so the user is simply asked again. The engine replaces this with
real rule matching and persisted scopes; `SessionRuleMemory` is the seam it plugs into.
"""

from __future__ import annotations

import logging
import re

from pydantic import BaseModel

from toolgate.core.context import ToolContext
from toolgate.core.permission import Decision, PermissionPolicy, RuleSuggestion
from toolgate.core.session import Session
from toolgate.core.tool import AnyTool

logger = logging.getLogger("toolgate.sidecar.rules")

_WHOLE_TOOL = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class RememberingPolicy:
    """Wraps a policy: an "ask" for a tool the user allowed for the session becomes an "allow".

    A "deny" is never overridden (deny before allow), and nothing the inner policy allows changes.
    """

    def __init__(self, inner: PermissionPolicy) -> None:
        self.inner = inner
        self.allowed_tools: set[str] = set()

    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        decision = await self.inner.decide(tool, tool_input, ctx)
        if decision.behavior == "ask" and tool.name in self.allowed_tools:
            return Decision(behavior="allow", reason="the user allowed it for this session", rule=tool.name)
        return decision


class SessionRuleMemory:
    """Implements `approvals.RuleMemory` for sessions whose policy is a `RememberingPolicy`."""

    async def remember(self, session: Session, rule: RuleSuggestion) -> None:
        policy = session.policy
        if rule.scope != "session" or not _WHOLE_TOOL.match(rule.rule) or not isinstance(policy, RememberingPolicy):
            logger.warning(
                "the rule %r (%s scope) was not kept: this build remembers whole-tool rules for the session only",
                rule.rule,
                rule.scope,
            )
            return
        policy.allowed_tools.add(rule.rule)
