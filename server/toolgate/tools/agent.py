"""Agent: hand a self-contained task to a child agent with its own conversation; its final answer is the result.

The child itself is run by the agent layer (`toolgate.agent.subagents`), which builds this tool around a
`SubagentLauncher`: tools know no loop and no provider. Whether a call only reads depends on its type, so two
calls of read-only types in one batch run side by side, and any other runs alone, like any writing tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError
from toolgate.core.permission import PermissionCheck
from toolgate.core.tool import DescribeContext, Rendered, Tool, ToolInput

MAX_ANSWER_CHARS = 20_000


class AgentInput(ToolInput):
    description: str = Field(min_length=1, description="A short (3-5 word) description of the task.")
    prompt: str = Field(min_length=1, description="The task for the subagent, complete: it sees nothing else.")
    subagent_type: str = Field(min_length=1, description="Which kind of subagent to start (see the list above).")
    model: str | None = Field(default=None, description="Another model for this subagent (default: its type's).")


@dataclass(frozen=True, slots=True)
class SubagentAnswer:
    agent_type: str
    text: str
    stop_reason: str  # the child's: end_turn, max_tokens, max_turns, interrupted, error


class SubagentLauncher(Protocol):
    def type_names(self) -> dict[str, str]:
        """Every type this session offers, name → description."""
        ...

    def is_read_only_type(self, name: str) -> bool:
        """Whether every call a child of this type makes is a read (False for an unknown type: fail closed)."""
        ...

    async def run(self, tool_input: AgentInput, ctx: ToolContext) -> SubagentAnswer: ...


class AgentTool(Tool[AgentInput, SubagentAnswer]):
    name = "Agent"
    aliases = ("Task",)
    input_model = AgentInput
    max_result_chars = None  # the answer is capped here, with the cap announced

    def __init__(self, launcher: SubagentLauncher) -> None:
        self.launcher = launcher

    def description(self, ctx: DescribeContext) -> str:
        types = "\n".join(f"- {name}: {text}" for name, text in sorted(self.launcher.type_names().items()))
        return (
            "Start a subagent: a child agent with a fresh conversation that works on `prompt` alone and answers "
            "once; its answer is this call's result. Use it for work whose details the main conversation does not "
            "need (exploring the code, a contained change). Its permissions are never wider than yours. Calls of "
            "read-only types in one reply run at the same time.\nTypes:\n" + types
        )

    def is_read_only(self, tool_input: AgentInput) -> bool:
        return self.launcher.is_read_only_type(tool_input.subagent_type)

    def is_concurrency_safe(self, tool_input: AgentInput) -> bool:
        return self.is_read_only(tool_input)

    def is_destructive(self, tool_input: AgentInput) -> bool:
        return not self.is_read_only(tool_input)

    def summary(self, tool_input: AgentInput, workspace: object) -> str:
        return f"{tool_input.subagent_type}: {tool_input.description}"

    async def validate(self, tool_input: AgentInput, ctx: ToolContext) -> None:
        known = self.launcher.type_names()
        if tool_input.subagent_type not in known:
            raise StateError(
                f"There is no subagent type {tool_input.subagent_type!r}. Use one of: {', '.join(sorted(known))}."
            )

    async def check_permissions(self, tool_input: AgentInput, ctx: ToolContext) -> PermissionCheck:
        # Starting a child changes nothing by itself; each call the child makes goes through the gate on its own.
        return PermissionCheck(behavior="allow", reason="each call the subagent makes is checked on its own")

    async def call(self, tool_input: AgentInput, ctx: ToolContext) -> SubagentAnswer:
        return await self.launcher.run(tool_input, ctx)

    def to_result(self, data: SubagentAnswer, ctx: ToolContext) -> Rendered:
        text = data.text.strip() or "(the subagent gave no answer)"
        if len(text) > MAX_ANSWER_CHARS:
            text = (
                text[:MAX_ANSWER_CHARS] + f"\n[The subagent's answer was cut at {MAX_ANSWER_CHARS} characters of "
                f"{len(data.text)}; ask it for a shorter report if the rest matters.]"
            )
        if data.stop_reason == "end_turn":
            return Rendered(text)
        why = {
            "interrupted": "was interrupted",
            "max_turns": "stopped at its request limit",
            "max_tokens": "was cut off at the token limit",
            "error": "stopped on an error from the model API",
        }.get(data.stop_reason, f"stopped ({data.stop_reason})")
        return Rendered(f"[The {data.agent_type} subagent {why}; what it said last:]\n{text}", is_error=True)
