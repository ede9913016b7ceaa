"""What a child agent did, kept so a reopened session can draw its Agent card again.

Live, the panel builds the card from the child's events; a stored session keeps no events, only messages. So the
parent records one `SubagentRun` per Agent call when its child ends: the child's calls with their one-line
summaries and results' first lines, how it stopped, and its answer. A grandchild's run is kept inside the call of
its parent child that started it, as the panel draws it. Built from the same events the panel reads, so the record
and the live card cannot tell different stories.
"""

from __future__ import annotations

from typing import Any

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


class RunRecorder:
    """Builds a SubagentRun from the child's events, in the order the child emitted them."""

    def __init__(self, task_id: str, agent_type: str, description: str) -> None:
        self._run = SubagentRun(task_id=task_id, agent_type=agent_type, description=description)
        self._descriptions: dict[str, str] = {}  # by call id: an Agent call's task (only its start carries it)
        self._children: dict[str, RunRecorder] = {}  # by the child's Agent call id: its grandchildren

    def apply(self, event: ChatEvent) -> None:
        if isinstance(event, ToolCallStarted):
            self._run.calls.append(SubagentCall(id=event.tool_use_id, name=event.name, summary=event.summary))
            if isinstance(event.input, dict) and isinstance(event.input.get("description"), str):
                self._descriptions[event.tool_use_id] = event.input["description"]
        elif isinstance(event, ToolCallFinished):
            call = self._call(event.tool_use_id)
            if call is not None:
                call.result_summary, call.is_error = event.summary, event.is_error
        elif isinstance(event, MessageAdded) and event.message.role == "assistant":
            self._run.answer = event.message.text()
        elif isinstance(event, TurnEnd):
            self._run.stop_reason = event.stop_reason
        elif isinstance(event, SubagentEvent):
            self._apply_grandchild(event)

    def run(self) -> SubagentRun:
        return self._run.model_copy(deep=True)

    def _apply_grandchild(self, event: SubagentEvent) -> None:
        inner = _parsed(event.event)
        call = self._call(event.task_id)
        if inner is None or call is None:
            return
        recorder = self._children.get(event.task_id)
        if recorder is None:
            description = self._descriptions.get(event.task_id, "")
            recorder = self._children[event.task_id] = RunRecorder(event.task_id, event.agent_type, description)
        recorder.apply(inner)
        call.subagent = recorder._run

    def _call(self, tool_use_id: str) -> SubagentCall | None:
        return next((call for call in self._run.calls if call.id == tool_use_id), None)


def _parsed(payload: dict[str, Any]) -> ChatEvent | None:
    try:
        return CHAT_EVENT.validate_python(payload)
    except ValidationError:
        return None  # an event this version cannot read draws nothing
