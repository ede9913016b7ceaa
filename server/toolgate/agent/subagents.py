"""Run child agents for the Agent tool: each in its own conversation, inside its parent's scope and turn.

A child gets a session of its own (fresh readFileState, its own narrowed mode, its own tool list) that shares
with its parent what must stay one: the dependencies (output store, sandbox, background shells, and the
checkpoint guard, so its changes are checkpointed inside the parent's turn), the working directories, the
decisions record and the approval flow (each request carries the child's identity, `SubagentRef`: the editor
names it, "explore: find the tests", and marks the waiting call in the Agent call's card). Its events reach the
parent's listeners wrapped in a SubagentEvent carrying the task id (the parent's Agent tool_use id), and its
usage is counted into the parent's turn and into the session's usage meter. What it does is recorded in the parent's
transcript as it goes, and once more whole when it ends (agent/subagent_record.py), for a reopened session's Agent
card and for exports.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import anyio

from toolgate.agent.agent_types import NEVER_FOR_CHILDREN, AgentType, AgentTypes, load_agent_types
from toolgate.agent.events import ChatEvent, StopReason, SubagentEvent, TurnEnd, UsageReport
from toolgate.agent.loop import AgentChat
from toolgate.agent.providers.base import Provider
from toolgate.agent.subagent_record import RunRecorder
from toolgate.agent.subagent_scope import ScopedPolicy, SubagentSettings
from toolgate.agent.system_prompt import build_system_prompt, current_environment
from toolgate.core.context import ToolContext
from toolgate.core.orchestrator import Orchestrator
from toolgate.core.permission import (
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    ReviewAnswer,
    ReviewRequest,
    SubagentRef,
)
from toolgate.core.registry import ToolRegistry
from toolgate.core.runner import ToolRunner
from toolgate.core.tool_session import ToolSession
from toolgate.permissions.decide import PermissionEngine
from toolgate.runtime import Runtime
from toolgate.tools.agent import AgentInput, AgentTool, SubagentAnswer

SUBAGENT_MARKER = "You are a toolgate subagent of type"


class NamedApprover:
    """The parent's approver, with every request naming the child that asks: an approval carries the child's
    identity (the editor names it and marks the call in the Agent call's card), a review's title starts with its
    name."""

    def __init__(self, inner: Approver, child: SubagentRef) -> None:
        self.inner = inner
        self.child = child

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        # A grandchild's request already names the grandchild: the innermost child is the one that asks.
        named = request if request.subagent is not None else request.model_copy(update={"subagent": self.child})
        return await self.inner.request(named, ctx)

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        titled = request.model_copy(update={"title": f"{self.child.name} — {request.title}"})
        return await self.inner.review(titled, ctx)


@dataclass(eq=False)
class _ChildRuntime(Runtime):
    @property
    def checkpoints(self) -> None:
        """None: the parent's turn owns the turn checkpoint. The child's calls are still checkpointed before they
        change files, through the shared dependencies' change guard, inside the parent's turn."""
        return None

    async def aclose(self) -> None:
        """Nothing of its own to close: what it holds is its parent's."""


class Subagents:
    """The SubagentLauncher of one chat: the types it offers, and the children it starts at `depth` + 1."""

    def __init__(self, chat: AgentChat, types: AgentTypes, settings: SubagentSettings, depth: int = 0) -> None:
        self.chat = chat
        self.types = types
        self.settings = settings
        self.depth = depth

    def type_names(self) -> dict[str, str]:
        return {name: t.description for name, t in self.types.types.items()}

    def is_read_only_type(self, name: str) -> bool:
        found = self.types.types.get(name)
        return found is not None and found.read_only

    async def run(self, tool_input: AgentInput, ctx: ToolContext) -> SubagentAnswer:
        agent_type = self.types.types[tool_input.subagent_type]  # validate() refused unknown types
        task_id = ctx.tool_use_id
        identity = SubagentRef(task_id=task_id, agent_type=agent_type.name, description=tool_input.description)
        child = self._child_chat(agent_type, identity, tool_input.model or agent_type.model)
        transcript = self.chat.transcript
        recorder = RunRecorder(task_id, agent_type.name, tool_input.description, transcript.record_subagent_progress)

        def forward(event: ChatEvent) -> None:
            recorder.apply(event)
            if isinstance(event, TurnEnd):
                self.chat.add_usage(event.usage)
            elif isinstance(event, UsageReport):
                # The child's requests are the session's spending: the parent's meter counts them as they happen.
                reading = self.chat.context.count_elsewhere(task_id, event)
                if reading is not None:
                    self.chat.publish(reading)
            payload = event.model_dump(mode="json")
            self.chat.publish(SubagentEvent(task_id=task_id, agent_type=agent_type.name, event=payload))

        stop_forwarding = child.subscribe(forward)
        stop: StopReason = "error"  # what the record says of a child whose send raised
        try:
            stop = await send_interruptibly(child, tool_input.prompt)
        except anyio.get_cancelled_exc_class():
            stop = "interrupted"
            raise
        finally:
            stop_forwarding()
            child.release_listeners()
            # A reopened session draws the Agent card from this (a child's chat keeps no transcript: a grandchild's
            # run is recorded inside its parent child's).
            recorder.end(stop)
            transcript.record_subagent(recorder.run())
        last = child.messages[-1] if child.messages else None
        text = last.text() if last is not None and last.role == "assistant" else ""
        return SubagentAnswer(agent_type=agent_type.name, text=text, stop_reason=stop)

    def _child_chat(self, agent_type: AgentType, identity: SubagentRef, model: str | None) -> AgentChat:
        runtime = child_runtime(self.chat.runtime, agent_type, self.settings, identity)
        provider: Provider = self.chat.provider
        if model is not None and model != provider.model:
            provider = copy.copy(provider)  # the same client and endpoint, another model
            provider.model = model
        session = runtime.session
        system = "\n\n".join(
            part
            for part in (
                f"{SUBAGENT_MARKER} `{agent_type.name}`. Another agent gave you the task in the user message; your "
                "final message is all it will see, so make it a complete answer.",
                agent_type.prompt,
                build_system_prompt(current_environment(session.workspace), runtime.registry.names, session.workspace),
            )
            if part
        )
        child = AgentChat(
            runtime,
            provider,
            system_prompt=system,
            max_turns=self.chat.max_turns,
            max_tokens=self.chat.max_tokens,
            subagent=True,
        )
        if self.depth + 1 < self.settings.depth_limit():
            runtime.registry.add(AgentTool(Subagents(child, self.types, self.settings, self.depth + 1)))
        return child


async def send_interruptibly(child: AgentChat, prompt: str) -> StopReason:
    """The child's answer to `prompt`. Cancelled with the parent's call (an interrupt), the child is interrupted the
    way a chat is, and awaited: each of its calls then ends with its own result (a call waiting for approval says
    so, a command keeps its output), which cancelling the child's task from outside would replace with a generic
    "stopped" for every call."""
    outcome: list[StopReason | Exception] = []  # an exception is raised here as itself, not in an exception group
    not_to_start = False
    ended = anyio.Event()

    async def send() -> None:
        with anyio.CancelScope(shield=True):  # only the child's own interrupt stops it
            try:
                outcome.append("interrupted" if not_to_start else await child.send(prompt))
            except Exception as exc:
                outcome.append(exc)
            finally:
                ended.set()

    async with anyio.create_task_group() as group:
        group.start_soon(send)
        try:
            await ended.wait()
        except anyio.get_cancelled_exc_class():
            # Not running means done, or not started yet (its send sets its interrupt token before its first
            # await): asyncio runs the new task's first step before this one sees its cancellation, but nothing
            # promises that order, and a child that started after its interrupt would run unasked to its end.
            not_to_start = not child.interrupt()
            with anyio.CancelScope(shield=True):
                await ended.wait()
            raise
    [result] = outcome
    if isinstance(result, Exception):
        raise result
    return result


def child_runtime(
    parent_runtime: Runtime, agent_type: AgentType, settings: SubagentSettings, identity: SubagentRef
) -> Runtime:
    """A child's runtime: its own session (fresh file state, narrowed mode, named approvals) over the parent's
    dependencies, working directories and decisions, with the type's tools that the parent has."""
    parent = parent_runtime.session
    scope = ScopedPolicy(parent, agent_type, settings)
    session = ToolSession(
        workspace=parent.workspace,
        policy=scope,
        approver=NamedApprover(parent.approver, identity),
        mode=scope.mode(),
        id=parent.id,
        data_dir=parent.data_dir,
        deps=parent.deps,
        logger=parent.logger,
        review_edits=parent.review_edits,
        decisions=parent.decisions,
    )
    session.additional_dirs = parent.additional_dirs  # the same list: a directory added later counts for both
    session.cwd = parent.cwd
    parent_tools = parent_runtime.registry
    wanted = agent_type.tools if agent_type.tools is not None else parent_tools.names
    tools = [t for name in wanted if name not in NEVER_FOR_CHILDREN and (t := parent_tools.get(name)) is not None]
    registry = ToolRegistry(tools)
    runner = ToolRunner(registry, session)
    return _ChildRuntime(session, registry, runner, Orchestrator(runner, parent_runtime.orchestrator.max_concurrency))


def attach_subagents(chat: AgentChat, settings: SubagentSettings | None = None) -> Subagents | None:
    """Give `chat` the Agent tool, with the built-in types, the user's and (when trusted) the workspace's.
    None when subagents are off (a depth limit of 0)."""
    policy = chat.runtime.session.policy
    if settings is None:
        configured = policy.book.subagents if isinstance(policy, PermissionEngine) else None
        settings = SubagentSettings(configured.maxDepth, configured.customTypesInheritBypass) if configured else None
    settings = settings or SubagentSettings()
    if settings.depth_limit() < 1:
        return None
    trusted = isinstance(policy, PermissionEngine) and policy.book.workspace_trusted
    launcher = Subagents(chat, load_agent_types(chat.runtime.session.workspace, trusted=trusted), settings)
    for problem in launcher.types.problems:
        chat.runtime.session.logger.warning("subagent type not offered: %s", problem)
    chat.runtime.registry.add(AgentTool(launcher))
    return launcher
