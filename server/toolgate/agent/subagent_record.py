"""What a child agent did, kept so a reopened session can draw its Agent card again and an export can tell it.

Live, the panel builds the card from the child's events; a stored session keeps no events, only messages. So the
parent records each Agent call's run in its transcript as it happens: a start (its type and task), each call the
child starts and each result it gets (the call's one-line summary, the result's first line), each reply, each
grandchild's start and end, all as small `SubagentProgress` steps, and when the child ends the whole `SubagentRun`
once more (how it stopped, its answer). A crash or a kill mid-child thus leaves the run up to its last step, which
reads back as a run that never ended. A grandchild's run is kept inside the call of its parent child that started
it, as the panel draws it. Built from the same events the panel reads, and replayed by the same `apply_step` when a
transcript is read back, so the record, the reloaded record and the live card cannot tell different stories.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolgate.agent.events import (
    CHAT_EVENT,
    ChatEvent,
    MessageAdded,
    StopReason,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnd,
)


class SubagentCall(BaseModel):
    """One call a child made, as its line in the Agent card."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    name: str
    summary: str
    result_summary: str | None = Field(default=None, description="The result's first line; None: no result came.")
    is_error: bool = False
    subagent: SubagentRun | None = Field(default=None, description="The call's own child, when it is an Agent call.")


class SubagentRun(BaseModel):
    """One child agent's run, from its first request to its answer."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    task_id: str = Field(description="The parent's Agent tool_use id.")
    agent_type: str
    description: str
    calls: list[SubagentCall] = Field(default_factory=list)
    stop_reason: StopReason | None = Field(default=None, description="None: the child never ended its turn.")
    answer: str = Field(default="", description="The child's last reply: what its parent was given.")


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class RunStarted(_Step):
    kind: Literal["started"] = "started"
    agent_type: str
    description: str


class CallStarted(_Step):
    kind: Literal["call_started"] = "call_started"
    id: str
    name: str
    summary: str


class CallFinished(_Step):
    kind: Literal["call_finished"] = "call_finished"
    id: str
    result_summary: str
    is_error: bool


class Replied(_Step):
    kind: Literal["replied"] = "replied"
    text: str


class RunEnded(_Step):
    kind: Literal["ended"] = "ended"
    stop_reason: StopReason


RunStep = Annotated[RunStarted | CallStarted | CallFinished | Replied | RunEnded, Field(discriminator="kind")]


class SubagentProgress(BaseModel):
    """One step of a run, addressed by `path`: the Agent call ids from the parent's down to the run that took it
    (`["agent-1"]`: the child of the parent's call agent-1; `["agent-1", "c-agent"]`: that child's own child)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: list[str] = Field(min_length=1)
    step: RunStep


def apply_step(run: SubagentRun, path: list[str], step: RunStep) -> None:
    """`step` taken by `run` (`path` empty) or by the run of a call inside it (`path`: the Agent call ids down to it).
    A step for a call or a run this record does not hold (a line lost to a crash) changes nothing."""
    if path:
        call = _call(run, path[0])
        if call is None:
            return
        if len(path) == 1 and isinstance(step, RunStarted):
            call.subagent = SubagentRun(task_id=call.id, agent_type=step.agent_type, description=step.description)
        elif call.subagent is not None:
            apply_step(call.subagent, path[1:], step)
    elif isinstance(step, CallStarted):
        run.calls.append(SubagentCall(id=step.id, name=step.name, summary=step.summary))
    elif isinstance(step, CallFinished):
        call = _call(run, step.id)
        if call is not None:
            call.result_summary, call.is_error = step.result_summary, step.is_error
    elif isinstance(step, Replied):
        run.answer = step.text
    elif isinstance(step, RunEnded):
        run.stop_reason = step.stop_reason


def read_back(runs: Mapping[str, SubagentRun], running: Collection[str] = ()) -> dict[str, SubagentRun]:
    """The recorded runs as a person reads them back: a run (or a grandchild's) that never ended, unless its Agent call
    is among `running` (the calls whose children run right now), was interrupted: the session stopped, crashed or
    was killed while it ran. Nothing runs in a stored session, so nothing is shown running."""
    return {task_id: run if task_id in running else _interrupted(run) for task_id, run in runs.items()}


def _interrupted(run: SubagentRun) -> SubagentRun:
    calls = [
        call.model_copy(update={"subagent": _interrupted(call.subagent)}) if call.subagent is not None else call
        for call in run.calls
    ]
    return run.model_copy(update={"calls": calls, "stop_reason": run.stop_reason or "interrupted"})


class RunRecorder:
    """Builds a SubagentRun from the child's events, in the order the child emitted them, and hands each step to
    `keep` (the transcript) as it is taken, starting with the run's start."""

    def __init__(
        self, task_id: str, agent_type: str, description: str, keep: Callable[[SubagentProgress], None] | None = None
    ) -> None:
        self._run = SubagentRun(task_id=task_id, agent_type=agent_type, description=description)
        self._steps = _StepReader()
        self._keep = keep
        if keep is not None:
            keep(SubagentProgress(path=[task_id], step=RunStarted(agent_type=agent_type, description=description)))

    def apply(self, event: ChatEvent) -> None:
        for path, step in self._steps.read(event):
            apply_step(self._run, path, step)
            if self._keep is not None:
                self._keep(SubagentProgress(path=[self._run.task_id, *path], step=step))

    def end(self, stop_reason: StopReason) -> None:
        """The child's send is over: a run whose turn end was not heard (it failed, or was stopped before it began)
        ends with the reason its parent saw."""
        if self._run.stop_reason is None:
            self._run.stop_reason = stop_reason

    def run(self) -> SubagentRun:
        return self._run.model_copy(deep=True)


class _StepReader:
    """The steps a run's events say it took (a grandchild's, under its Agent call's id)."""

    def __init__(self) -> None:
        self._descriptions: dict[str, str] = {}  # by call id: an Agent call's task (only its start carries it)
        self._children: dict[str, _StepReader] = {}  # by the child's Agent call id: its grandchildren

    def read(self, event: ChatEvent) -> list[tuple[list[str], RunStep]]:
        if isinstance(event, ToolCallStarted):
            if isinstance(event.input, dict) and isinstance(event.input.get("description"), str):
                self._descriptions[event.tool_use_id] = event.input["description"]
            return [([], CallStarted(id=event.tool_use_id, name=event.name, summary=event.summary))]
        if isinstance(event, ToolCallFinished):
            return [([], CallFinished(id=event.tool_use_id, result_summary=event.summary, is_error=event.is_error))]
        if isinstance(event, MessageAdded) and event.message.role == "assistant":
            return [([], Replied(text=event.message.text()))]
        if isinstance(event, TurnEnd):
            return [([], RunEnded(stop_reason=event.stop_reason))]
        if isinstance(event, SubagentEvent):
            return self._grandchild(event)
        return []

    def _grandchild(self, event: SubagentEvent) -> list[tuple[list[str], RunStep]]:
        inner = _parsed(event.event)
        if inner is None:
            return []
        steps: list[tuple[list[str], RunStep]] = []
        reader = self._children.get(event.task_id)
        if reader is None:
            reader = self._children[event.task_id] = _StepReader()
            description = self._descriptions.get(event.task_id, "")
            steps.append(([event.task_id], RunStarted(agent_type=event.agent_type, description=description)))
        steps.extend(([event.task_id, *path], step) for path, step in reader.read(inner))
        return steps


def _call(run: SubagentRun, tool_use_id: str) -> SubagentCall | None:
    return next((call for call in run.calls if call.id == tool_use_id), None)


def _parsed(payload: dict[str, Any]) -> ChatEvent | None:
    try:
        return CHAT_EVENT.validate_python(payload)
    except ValidationError:
        return None  # an event this version cannot read draws nothing
