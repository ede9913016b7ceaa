"""The hooks the settings configure: which ones match, and which ones may run.

A hook from the person's own settings (the user file, a `--settings` file) runs. A hook from the workspace's own
files (`.toolgate/settings.json`, `settings.local.json`) runs only in a trusted workspace (trust.py) *and* while
its content is trusted: the digest of its event, matcher and command is listed in `trustedHooks` of the user
settings file (`toolgate hooks trust`). A `git pull` that changes a hook's command changes its digest, so the new
command waits for review instead of running.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from toolgate.permissions.hooks.events import HOOK_EVENTS, HookEvent
from toolgate.permissions.settings import HookCommand, HookMatcher
from toolgate.permissions.sources import RuleProblem, RuleSource

_NAMES = re.compile(r"[A-Za-z0-9_|]+")
# Sources the person wrote themselves: their hooks run without review.
OWN_SOURCES = frozenset({"user", "flag", "cli", "session"})
ID_LENGTH = 12  # the digest's prefix that names a hook on the command line and in the panel


def hook_digest(event: str, matcher: str, command: str) -> str:
    """What trust is recorded for: the hook's event, matcher and exact command (sha256, hex)."""
    return hashlib.sha256(json.dumps([event, matcher, command], ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ConfiguredHook:
    event: HookEvent
    matcher: str
    command: HookCommand
    source: RuleSource
    pattern: re.Pattern[str] | frozenset[str] | None  # None: matches everything
    digest: str = ""

    @property
    def id(self) -> str:
        return self.digest[:ID_LENGTH]

    @property
    def from_workspace(self) -> bool:
        return self.source.name not in OWN_SOURCES

    def matches(self, names: Sequence[str]) -> bool:
        """Whether the matcher covers one of `names` (a tool's name and aliases, or the event's matched value)."""
        if self.pattern is None:
            return True
        if isinstance(self.pattern, frozenset):
            return any(name in self.pattern for name in names)
        return any(self.pattern.fullmatch(name) for name in names)

    def describe(self) -> str:
        return f"{self.event} hook `{self.command.command}` ({self.source.describe()})"


@dataclass(slots=True)
class CompiledHooks:
    runnable: list[ConfiguredHook] = field(default_factory=list)
    waiting: list[ConfiguredHook] = field(default_factory=list)  # workspace hooks whose content is not trusted
    problems: list[RuleProblem] = field(default_factory=list)


def _pattern(matcher: str) -> re.Pattern[str] | frozenset[str] | None:
    """re.error for a matcher that is neither a name list nor a valid regular expression."""
    if matcher in ("", "*"):
        return None
    if _NAMES.fullmatch(matcher):
        return frozenset(n for n in matcher.split("|") if n)
    return re.compile(matcher)


def configured_hooks(
    configured: Mapping[str, Sequence[tuple[RuleSource, HookMatcher]]],
) -> tuple[list[ConfiguredHook], list[RuleProblem]]:
    """Every hook the settings name, in configuration order, and a problem for each unusable matcher."""
    hooks: list[ConfiguredHook] = []
    problems: list[RuleProblem] = []
    for event in HOOK_EVENTS:
        for source, entry in configured.get(event, ()):
            matcher = entry.matcher.strip()
            try:
                pattern = _pattern(matcher)
            except re.error as exc:
                message = (
                    f"{source.describe()}: the {event} matcher {matcher!r} is not a valid regular expression "
                    f"({exc}); its hooks never run"
                )
                problems.append(RuleProblem(source, message))
                continue
            hooks.extend(
                ConfiguredHook(event, matcher, command, source, pattern, hook_digest(event, matcher, command.command))
                for command in entry.hooks
            )
    return hooks, problems


def waiting_message(hook: ConfiguredHook) -> str:
    matcher = f", matcher {hook.matcher!r}" if hook.matcher not in ("", "*") else ""
    return (
        f"{hook.source.describe()}: the {hook.event} hook `{hook.command.command}`{matcher} is new or changed since "
        f"you last trusted this workspace's hooks, so it does not run. Review the command, then run "
        f"`toolgate hooks trust {hook.id}` (in the editor: the command toolgate: Review Workspace Hooks)"
    )


def compile_hooks(
    configured: Mapping[str, Sequence[tuple[RuleSource, HookMatcher]]], trusted: Collection[str] = ()
) -> CompiledHooks:
    """The hooks that may run, and the workspace hooks waiting for review (each also reported as a problem)."""
    hooks, problems = configured_hooks(configured)
    compiled = CompiledHooks(problems=problems)
    for hook in hooks:
        if hook.from_workspace and hook.digest not in trusted:
            compiled.waiting.append(hook)
            compiled.problems.append(RuleProblem(hook.source, waiting_message(hook)))
        else:
            compiled.runnable.append(hook)
    return compiled
