"""The session's own hook events, as the chat meets them (the tool events are the permission engine's).

    session_start(source)      before the first prompt is handled ("new" or "resume"), and after a compaction
                               ("compact"); context the hooks print goes to the model with the prompt
    prompt_submitted(prompt)   UserPromptSubmit: may add context, or block the prompt with a reason for the person
    stop(reason, n)            Stop (SubagentStop for a subagent): may ask the model to continue, with a reason;
                               at most MAX_CONTINUATIONS times per turn, and the bound is announced
    pre_compact(trigger)       PreCompact ("auto" or "manual"): context becomes instructions for the summary
    session_end(reason)        SessionEnd, when the chat closes

The compaction code calls `pre_compact` before it summarises and `session_start("compact")` after. Everything a
hook said that the person should see is reported as a `HookReport` chat event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolgate.agent.events import ChatEvent, HookReport
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.hooks import HookDispatcher, HookEvent, HookOutcome
from toolgate.runtime import Runtime

log = logging.getLogger("toolgate.agent.hooks")

MAX_CONTINUATIONS = 3  # per turn: Stop hooks cannot keep a model going forever
SessionSource = Literal["new", "resume", "compact"]


@dataclass(frozen=True, slots=True)
class PromptVerdict:
    blocked: str | None = None  # the reason, naming the hook; None: the prompt goes on
    context: list[str] = field(default_factory=list)


def context_note(context: list[str]) -> str:
    """Context from hooks, as the model reads it next to the prompt."""
    return "[Context added by hooks]\n" + "\n".join(text.strip() for text in context)


class ChatHooks:
    def __init__(self, runtime: Runtime, emit: Callable[[ChatEvent], None]) -> None:
        self._runtime = runtime
        self._emit = emit

    @property
    def _dispatcher(self) -> HookDispatcher | None:
        policy = self._runtime.session.policy
        return policy.hooks if isinstance(policy, PermissionEngine) else None

    async def _run(self, event: HookEvent, fields: Mapping[str, Any]) -> HookOutcome:
        dispatcher = self._dispatcher
        if dispatcher is None:
            return HookOutcome()
        policy = self._runtime.session.policy
        if isinstance(policy, PermissionEngine):
            policy.refresh()  # a settings file edited by hand counts from the next event on
        try:
            outcome = await dispatcher.run(event, self._runtime.session, fields)
        except Exception as exc:  # a bug here must not end the turn (or keep a closing chat from closing)
            log.exception("%s hooks could not run", event)
            outcome = HookOutcome(problems=[f"the {event} hooks could not run ({exc}); they were skipped"])
        for problem in outcome.problems:
            self._emit(HookReport(event=event, outcome="problem", message=problem))
        for notice in outcome.notices:
            self._emit(HookReport(event=event, outcome="notice", message=notice))
        return outcome

    async def session_start(self, source: SessionSource) -> list[str]:
        return (await self._run("SessionStart", {"source": source})).context

    async def prompt_submitted(self, prompt: str) -> PromptVerdict:
        outcome = await self._run("UserPromptSubmit", {"prompt": prompt})
        if outcome.decision == "block":
            reason = f"The {outcome.decided_by} blocked this prompt: {outcome.reason}"
            self._emit(HookReport(event="UserPromptSubmit", outcome="blocked", message=reason))
            return PromptVerdict(blocked=reason)
        return PromptVerdict(context=outcome.context)

    async def stop(self, stop_reason: str, continuations: int, *, subagent: bool = False) -> str | None:
        """Whether a Stop hook asks the model to go on: the text for the model, or None to stop."""
        event: HookEvent = "SubagentStop" if subagent else "Stop"
        outcome = await self._run(event, {"stop_reason": stop_reason, "continuations": continuations})
        if outcome.decision != "continue":
            return None
        if continuations >= MAX_CONTINUATIONS:
            message = (
                f"The {outcome.decided_by} asked the model to continue again ({outcome.reason}), but {event} hooks "
                f"may do that at most {MAX_CONTINUATIONS} times per turn; the turn ends here."
            )
            self._emit(HookReport(event=event, outcome="limit", message=message))
            return None
        message = f"The {outcome.decided_by} asked the model to continue: {outcome.reason}"
        self._emit(HookReport(event=event, outcome="continued", message=message))
        return f"[A {event} hook asks you to continue before you finish: {outcome.reason}]"

    async def pre_compact(self, trigger: Literal["auto", "manual"]) -> list[str]:
        return (await self._run("PreCompact", {"trigger": trigger})).context

    async def session_end(self, reason: str) -> None:
        await self._run("SessionEnd", {"reason": reason})
