"""A child agent's permissions: the intersection of its type and its parent's current permissions.

- Tools: the type's tools that the parent has (never TodoWrite; Agent only below the depth limit).
- Mode: the parent's mode, read at every decision, narrowed: a read-only type or a read-only (plan) parent gives
  a read-only child; bypassPermissions reaches a custom type only when the user's settings say so.
- Rules and working directories: the parent's own engine decides every call the child makes, in the child's
  mode, so each deny, ask and allow rule and each working directory is the parent's.
- A read-only child's write is refused outright: it never becomes a question, because no answer may widen it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from toolgate.agent.agent_types import AgentType
from toolgate.core.messages import ToolResult
from toolgate.core.permission import (
    AfterCallPolicy,
    Decision,
    DomainVerdict,
    FetchGuard,
    PermissionMode,
    PermissionPolicy,
    ReadGuard,
    mode_traits,
)
from toolgate.core.tool_session import ToolSession

if TYPE_CHECKING:
    from toolgate.core.context import ToolContext
    from toolgate.core.tool import AnyTool

HARD_MAX_DEPTH = 3


@dataclass(frozen=True, slots=True)
class SubagentSettings:
    """`max_depth`: how deep children may nest (1: a child starts no child), never above HARD_MAX_DEPTH.
    `custom_bypass`: a custom type's child of a bypassPermissions parent runs in bypass too (user settings only)."""

    max_depth: int = 1
    custom_bypass: bool = False

    def depth_limit(self) -> int:
        return max(0, min(self.max_depth, HARD_MAX_DEPTH))


def child_mode(parent: PermissionMode, agent_type: AgentType, settings: SubagentSettings) -> PermissionMode:
    """The mode a child of `agent_type` runs in while its parent is in `parent`: never wider than the parent's."""
    if agent_type.read_only or mode_traits(parent).read_only:
        return PermissionMode.PLAN
    if mode_traits(parent).allows_every_call and agent_type.custom and not settings.custom_bypass:
        return PermissionMode.DEFAULT
    return parent


class ScopedPolicy:
    """The policy of a child's session: the parent's policy, asked in the child's (narrowed) mode."""

    def __init__(self, parent: ToolSession, agent_type: AgentType, settings: SubagentSettings) -> None:
        self.parent = parent
        self.agent_type = agent_type
        self.settings = settings

    def mode(self) -> PermissionMode:
        return child_mode(self.parent.mode, self.agent_type, self.settings)

    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        mode = self.mode()
        ctx.session.mode = mode  # the parent's mode may have changed since the last call
        if mode_traits(mode).read_only and not tool.is_read_only(tool_input):
            why = "its type only looks" if self.agent_type.read_only else "its parent is in plan (read-only) mode"
            return Decision(
                behavior="deny",
                reason=f"{self.agent_type.name} is a read-only subagent ({why}), so this call, which may change "
                "something, was refused without asking. Use read-only tools and commands, and report what should "
                "change instead.",
            )
        return await self.parent.policy.decide(tool, tool_input, ctx)

    # The parent's guards hold for the child too: Glob and Grep hide what a read rule protects, WebFetch
    # follows the domain rules. A parent without a guard gives none (the tools then fail closed).
    def guards_reads(self) -> bool:
        return isinstance(self.parent.policy, ReadGuard) and self.parent.policy.guards_reads()

    def read_denied(self, path: Path) -> str | None:
        return self.parent.policy.read_denied(path) if isinstance(self.parent.policy, ReadGuard) else None

    def domain_verdict(self, host: str) -> DomainVerdict:
        policy = self.parent.policy
        return policy.domain_verdict(host) if isinstance(policy, FetchGuard) else DomainVerdict(behavior="deny")

    async def after_call(
        self, tool: AnyTool, tool_input: BaseModel, result: ToolResult, ctx: ToolContext
    ) -> ToolResult:
        policy: PermissionPolicy = self.parent.policy
        return await policy.after_call(tool, tool_input, result, ctx) if isinstance(policy, AfterCallPolicy) else result
