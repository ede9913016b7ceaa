"""What the hooks of one event said, merged: a decision (naming the hook that made it), context, notices, problems.

A hook answers with its exit status and, optionally, one `HookOutput` JSON object on stdout. Exit 0 with JSON is
its answer; exit 0 with plain text is no answer, except for SessionStart and UserPromptSubmit, where the text is
context for the model. Exit 2 means what `EXIT_2` says for the event, with stderr as the reason. Anything else (a
different exit status, a timeout, output that is not a valid answer, a decision the event does not take) is
reported and counts as no opinion. Across hooks: deny (or block) beats ask beats allow (or continue).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from toolgate.permissions.hooks.config import ConfiguredHook
from toolgate.permissions.hooks.events import DECISIONS, EXIT_2, Decision, HookEvent, HookOutput
from toolgate.permissions.hooks.process import MAX_OUTPUT_BYTES, HookRun

MAX_CONTEXT_CHARS = 10_000  # per hook: context a hook adds for the model
_PRIORITY: dict[Decision, int] = {"deny": 3, "block": 3, "ask": 2, "allow": 1, "continue": 1}
_PLAIN_TEXT_IS_CONTEXT = frozenset({"SessionStart", "UserPromptSubmit"})


@dataclass(slots=True)
class HookOutcome:
    """Everything the matching hooks said about one event, merged."""

    decision: Decision | None = None
    reason: str = ""
    decided_by: str = ""  # the hook(s) that made the decision, in words
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)  # for the model
    notices: list[str] = field(default_factory=list)  # for the person (exit 2 where nothing can be stopped)
    problems: list[str] = field(default_factory=list)
    ran: int = 0


@dataclass(frozen=True, slots=True)
class _Said:
    decision: Decision
    reason: str
    hook: ConfiguredHook


def _capped_context(hook: ConfiguredHook, text: str) -> str:
    text = text.strip()
    if len(text) <= MAX_CONTEXT_CHARS:
        return text
    return f"{text[:MAX_CONTEXT_CHARS]}\n[{hook.describe()} added more; cut at {MAX_CONTEXT_CHARS} characters]"


def _answer(run: HookRun, outcome: HookOutcome) -> HookOutput | None:
    """The hook's JSON answer; None for no answer (plain text is context where the event takes it)."""
    hook = run.hook
    text = run.stdout.decode("utf-8", "replace").strip()
    if not text.startswith("{"):
        if text and hook.event in _PLAIN_TEXT_IS_CONTEXT:
            outcome.context.append(_capped_context(hook, text))
        return None
    try:
        return HookOutput.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        summary = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.errors()[0]["msg"]
        outcome.problems.append(
            f"{hook.describe()} printed output that is not a valid hook answer ({summary}); it was treated as "
            "having no opinion"
        )
        return None


def _interpret(run: HookRun, outcome: HookOutcome, said: list[_Said]) -> None:
    hook, name = run.hook, run.hook.describe()
    if run.cut:
        streams = " and ".join(run.cut)
        outcome.problems.append(
            f"{name} wrote more than {MAX_OUTPUT_BYTES} bytes to {streams}; only the first {MAX_OUTPUT_BYTES} were kept"
        )
    if run.failure is not None:
        outcome.problems.append(f"{name} {run.failure}; it was treated as having no opinion")
        return
    stderr = run.stderr.decode("utf-8", "replace").strip()
    if run.exit_code == 2:
        text = stderr or "(the hook gave no reason on stderr)"
        meaning = EXIT_2.get(hook.event, "notice")
        if meaning == "context":
            outcome.context.append(f"A hook objected after the call: {_capped_context(hook, text)}")
        elif meaning == "notice":
            outcome.notices.append(f"{name}: {text}")
        else:
            said.append(_Said(meaning, text, hook))
        return
    if run.exit_code != 0:
        detail = f": {stderr[:500]}" if stderr else ""
        outcome.problems.append(
            f"{name} failed with exit status {run.exit_code}{detail}; it was treated as having no opinion"
        )
        return
    answer = _answer(run, outcome)
    if answer is None:
        return
    if answer.decision is not None:
        if answer.decision in DECISIONS.get(hook.event, ()):
            said.append(_Said(answer.decision, answer.reason or f"it said {answer.decision}", hook))
        else:
            takes = " or ".join(f'"{d}"' for d in sorted(DECISIONS.get(hook.event, ()))) or "no decision"
            outcome.problems.append(
                f'{name} answered "decision": "{answer.decision}", but {hook.event} takes {takes}; it was ignored'
            )
    if answer.updated_input is not None:
        if hook.event == "PreToolUse":
            outcome.updated_input = answer.updated_input
        else:
            outcome.problems.append(f"{name} answered updated_input, which only PreToolUse takes; it was ignored")
    if answer.additional_context:
        outcome.context.append(_capped_context(hook, answer.additional_context))


def merge(event: HookEvent, runs: Sequence[HookRun]) -> HookOutcome:
    """What `runs` (in configuration order) said together."""
    outcome = HookOutcome(ran=len(runs))
    said: list[_Said] = []
    for run in runs:
        _interpret(run, outcome, said)
    if said:
        best = max(_PRIORITY[s.decision] for s in said)
        chosen = [s for s in said if _PRIORITY[s.decision] == best]
        outcome.decision = chosen[0].decision
        outcome.reason = "; ".join(s.reason for s in chosen)
        outcome.decided_by = "; ".join(dict.fromkeys(s.hook.describe() for s in chosen))
    return outcome
