"""PreToolUse / PostToolUse hooks: commands from settings that see each call and may have a say.

A hook gets one JSON object on stdin:

    {"event": "PreToolUse", "session_id": ..., "cwd": ..., "permission_mode": ..., "tool_name": ...,
     "tool_input": {...}, "tool_use_id": ...}          (PostToolUse adds "tool_result": {"content", "is_error"})

and answers with its exit status and, optionally, one JSON object on stdout:

    {"decision": "allow" | "deny" | "ask", "reason": "...", "updated_input": {...}, "additional_context": "..."}

Exit 2 blocks the call (PreToolUse) with stderr as the reason; for PostToolUse, stderr goes to the model.
Any other failure (another exit status, a timeout — 60 s unless the hook says otherwise —, output that is not
the JSON above) is reported and counts as no decision. Across hooks: deny beats ask beats allow. What a hook's
decision may override is the engine's business (a hook's allow never beats a deny rule or a safety check).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from anyio.abc import ByteReceiveStream, Process
from pydantic import BaseModel, ConfigDict, ValidationError

from toolgate.core.child_env import child_environment
from toolgate.permissions.settings import DEFAULT_HOOK_TIMEOUT, HookCommand, HookMatcher
from toolgate.permissions.sources import RuleProblem, RuleSource
from toolgate.shell.watchdog import WATCHDOG

HookEvent = Literal["PreToolUse", "PostToolUse"]
MAX_OUTPUT_BYTES = 1024 * 1024
_NAMES = re.compile(r"[A-Za-z0-9_|]+")
_PRIORITY = {"deny": 3, "ask": 2, "allow": 1}


class HookOutput(BaseModel):
    """What a hook may print on stdout. Unknown keys are an error: a misspelt "decision" must not pass silently."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str | None = None
    updated_input: dict[str, Any] | None = None
    additional_context: str | None = None


@dataclass(frozen=True, slots=True)
class ConfiguredHook:
    event: HookEvent
    matcher: str
    command: HookCommand
    source: RuleSource
    pattern: re.Pattern[str] | frozenset[str] | None  # None: matches every tool

    def matches(self, tool_names: Sequence[str]) -> bool:
        if self.pattern is None:
            return True
        if isinstance(self.pattern, frozenset):
            return any(name in self.pattern for name in tool_names)
        return any(self.pattern.fullmatch(name) for name in tool_names)


@dataclass(slots=True)
class HookOutcome:
    """Everything the matching hooks said about one call, merged."""

    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ran: int = 0


def compile_hooks(
    configured: Mapping[str, Sequence[tuple[RuleSource, HookMatcher]]],
) -> tuple[list[ConfiguredHook], list[RuleProblem]]:
    """The hooks from settings, and a problem for each matcher that cannot be used (that hook never runs)."""
    hooks: list[ConfiguredHook] = []
    problems: list[RuleProblem] = []
    events: tuple[HookEvent, ...] = ("PreToolUse", "PostToolUse")
    for event in events:
        for source, entry in configured.get(event, ()):
            matcher = entry.matcher.strip()
            pattern: re.Pattern[str] | frozenset[str] | None
            if matcher in ("", "*"):
                pattern = None
            elif _NAMES.fullmatch(matcher):
                pattern = frozenset(n for n in matcher.split("|") if n)
            else:
                try:
                    pattern = re.compile(matcher)
                except re.error as exc:
                    message = (
                        f"{source.describe()}: the {event} matcher {matcher!r} is not a valid regular expression "
                        f"({exc}); its hooks never run"
                    )
                    problems.append(RuleProblem(source, message))
                    continue
            hooks.extend(ConfiguredHook(event, matcher, command, source, pattern) for command in entry.hooks)
    return hooks, problems


@dataclass(frozen=True, slots=True)
class _Run:
    hook: ConfiguredHook
    exit_code: int | None  # None: it did not finish (timeout) or could not start
    stdout: bytes = b""
    stderr: bytes = b""
    failure: str | None = None


async def _read_capped(stream: ByteReceiveStream | None, sink: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        if len(sink) < MAX_OUTPUT_BYTES:
            sink.extend(chunk[: MAX_OUTPUT_BYTES - len(sink)])


async def _feed(process: Process, payload: bytes) -> None:
    if process.stdin is None:
        return
    try:
        await process.stdin.send(payload)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError, ConnectionResetError):
        pass  # the hook did not read its input; that is its business
    finally:
        with contextlib.suppress(anyio.BrokenResourceError, BrokenPipeError, ConnectionResetError):
            await process.stdin.aclose()


def _kill_group(process: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


# Hooks the user configured (their own settings file, a --settings file, the command line) get the secrets the user
# named in env.passThrough, as Bash does; a hook from the workspace's files never does, since the workspace wrote it.
_USERS_OWN_SOURCES = frozenset({"user", "flag", "cli", "session"})


async def run_hook(
    hook: ConfiguredHook, payload: bytes, cwd: Path, env: Mapping[str, str], pass_through: Sequence[str] = ()
) -> _Run:
    timeout = hook.command.timeout or DEFAULT_HOOK_TIMEOUT
    kept = pass_through if hook.source.name in _USERS_OWN_SOURCES else ()
    try:
        process = await anyio.open_process(
            ["/bin/sh", "-c", hook.command.command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=child_environment(env, pass_through=kept),  # secrets scrubbed, apart from the user's own choice
            start_new_session=True,  # its own process group, so a timeout kills everything it started
        )
    except OSError as exc:
        return _Run(hook, None, failure=f"could not be started ({exc})")
    WATCHDOG.track(process.pid)
    out, err = bytearray(), bytearray()
    finished = False
    try:
        with anyio.move_on_after(timeout) as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(_feed, process, payload)
                group.start_soon(_read_capped, process.stdout, out)
                group.start_soon(_read_capped, process.stderr, err)
            await process.wait()
        if scope.cancelled_caught:
            return _Run(
                hook, None, bytes(out), bytes(err), failure=f"did not finish within {timeout:g} s and was stopped"
            )
        finished = True
        return _Run(hook, process.returncode, bytes(out), bytes(err))
    finally:
        if not finished:
            _kill_group(process)  # a timeout (or cancellation) stops everything the hook started
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()
        # Watched only while it runs: what a finished hook deliberately left running is the hook's business.
        WATCHDOG.forget(process.pid)


def _describe(hook: ConfiguredHook) -> str:
    return f"{hook.event} hook `{hook.command.command}` ({hook.source.describe()})"


def _interpret(run: _Run, outcome: HookOutcome, decisions: list[tuple[str, str]]) -> None:
    hook, name = run.hook, _describe(run.hook)
    stderr = run.stderr.decode("utf-8", "replace").strip()
    if run.failure is not None:
        outcome.problems.append(f"{name} {run.failure}; it was treated as having no opinion")
        return
    if run.exit_code == 2:
        text = stderr or "(the hook gave no reason on stderr)"
        if hook.event == "PreToolUse":
            decisions.append(("deny", f"a hook blocked it: {text}"))
        else:
            outcome.context.append(f"A hook objected after the call: {text}")
        return
    if run.exit_code != 0:
        detail = f": {stderr[:500]}" if stderr else ""
        outcome.problems.append(
            f"{name} failed with exit status {run.exit_code}{detail}; it was treated as having no opinion"
        )
        return
    text = run.stdout.decode("utf-8", "replace").strip()
    if not text.startswith("{"):
        return  # plain output (or none) is not an answer
    try:
        answer = HookOutput.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        summary = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.errors()[0]["msg"]
        outcome.problems.append(
            f"{name} printed output that is not a valid hook answer ({summary}); it was treated as having no opinion"
        )
        return
    if answer.decision is not None and hook.event == "PreToolUse":
        decisions.append((answer.decision, answer.reason or f"a hook said {answer.decision}"))
    if answer.updated_input is not None and hook.event == "PreToolUse":
        outcome.updated_input = answer.updated_input
    if answer.additional_context:
        outcome.context.append(answer.additional_context)


async def run_hooks(
    hooks: Sequence[ConfiguredHook],
    payload: dict[str, Any],
    cwd: Path,
    env: Mapping[str, str],
    pass_through: Sequence[str] = (),
) -> HookOutcome:
    """Run `hooks` concurrently on one payload and merge what they said (deny > ask > allow)."""
    outcome = HookOutcome(ran=len(hooks))
    if not hooks:
        return outcome
    data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
    runs: list[_Run | None] = [None] * len(hooks)

    async def one(index: int) -> None:
        runs[index] = await run_hook(hooks[index], data, cwd, env, pass_through)

    async with anyio.create_task_group() as group:
        for index in range(len(hooks)):
            group.start_soon(one, index)
    decisions: list[tuple[str, str]] = []
    for run in runs:  # configuration order, whatever order they finished in
        assert run is not None
        _interpret(run, outcome, decisions)
    if decisions:
        best = max(_PRIORITY[d] for d, _ in decisions)
        chosen = [(d, r) for d, r in decisions if _PRIORITY[d] == best]
        outcome.decision = chosen[0][0]  # type: ignore[assignment]
        outcome.reason = "; ".join(r for _, r in chosen)
    return outcome
