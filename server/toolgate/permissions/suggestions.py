"""Rules an "ask" offers as "always allow": at most three, narrowest first, never one that lets any code run.

Command rules are offered for the local settings file (they are about this project); path rules for the
session (a directory outside the project is rarely meant for good).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolgate.core.paths import is_within
from toolgate.core.permission import RuleScope, RuleSuggestion
from toolgate.permissions.command_forms import exact_text, grammar_escape, rule_for_words
from toolgate.permissions.facts import CallFacts
from toolgate.permissions.rules import (
    Rule,
    RuleError,
    command_words_match,
    is_code_execution_name,
    is_code_execution_rule,
    leading_command,
    parse_rule,
)

if TYPE_CHECKING:
    from toolgate.permissions.coverage import Need

MAX_SUGGESTIONS = 3
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_:-]*")


def _escape_path(text: str) -> str:
    """A literal path as a pattern inside a rule: glob characters escaped, then the grammar's escapes."""
    pattern = re.sub(r"([*?\[\]\\])", r"\\\1", text)
    return pattern.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _path_rules(tool: str, path: Path, workspace: Path, directory: bool) -> list[str]:
    if is_within(path, workspace) and path != workspace:
        relative = path.relative_to(workspace).as_posix()
        own = f"{tool}(/{_escape_path(relative)})"
        parent = path.parent.relative_to(workspace).as_posix()
        around = f"{tool}(/{_escape_path(parent)}/**)" if parent != "." else f"{tool}(/**)"
    else:
        own = f"{tool}(/{_escape_path(str(path))})"
        around = f"{tool}(/{_escape_path(str(path.parent))}/**)" if path.parent != path else own
    if directory:
        return [own[:-1] + "/**)" if not own.endswith("/**)") else own]
    return [own, around]


def _command_rules(words: Sequence[str]) -> list[str]:
    rules = [f"Bash({rule_for_words(words)})"]
    if len(words) < 2:
        return rules
    head = len(leading_command(words))
    if is_code_execution_name(words):
        width = head + 1  # `npm run build:*`, never `npm run:*`
    elif _SUBCOMMAND.fullmatch(words[1]):
        width = 2  # `git push:*`
    else:
        width = 1  # `ls:*` for `ls -la src`
    widths = [width] if width == 1 else [width, 1]
    rules += [f"Bash({rule_for_words(words[:w])}:*)" for w in widths if w <= len(words)]
    return rules


def _covers(rule: Rule, facts: CallFacts, words: Sequence[str] | None) -> bool:
    """A command suggestion must match what it is offered for (quoting can turn `*` into a glob, say)."""
    if rule.tool != "Bash" or facts.bash is None:
        return True
    if words is None:  # a whole-command rule
        return rule.kind == "exact" and exact_text(rule.specifier) == exact_text(facts.bash.command)
    return command_words_match(rule, words)


def suggest(needs: Sequence[Need], facts: CallFacts, workspace: Path) -> list[RuleSuggestion]:
    candidates: list[tuple[str, RuleScope, Sequence[str] | None]] = []
    first = needs[0] if needs else None
    commands = [n.part for n in needs if n.kind == "command" and n.part is not None]
    # One rule is offered, so it must meet every need: a Bash rule does not cover the paths a command reads or
    # writes outside what the mode allows, nor an Edit rule the command. (Mixed needs: nothing to offer; the
    # person allows once, or picks a mode.)
    kinds = {n.kind for n in needs}
    if len(kinds) > 1:
        return []
    if facts.family == "bash" and facts.bash is not None and commands:
        if len(commands) == 1 and commands[0].words_ok:
            candidates += [(r, "local", commands[0].argv) for r in _command_rules(commands[0].argv)]
        elif "\n" not in facts.bash.command:
            candidates.append((f"Bash({grammar_escape(exact_text(facts.bash.command))})", "local", None))
    elif first is not None and first.kind == "read" and first.path is not None:
        candidates += [(r, "session", ()) for r in _path_rules("Read", first.path.parent, workspace, directory=True)]
    elif first is not None and first.kind == "write" and first.path is not None:
        candidates += [(r, "session", ()) for r in _path_rules("Edit", first.path, workspace, directory=False)]
    elif first is not None and first.kind == "fetch" and facts.host:
        host = f"[{facts.host}]" if ":" in facts.host else facts.host  # an IPv6 address reads better bracketed
        candidates.append((f"WebFetch(domain:{host})", "local", ()))
    elif first is not None and first.kind == "tool" and facts.family == "other":
        candidates.append((facts.tool_name, "local", ()))

    out: list[RuleSuggestion] = []
    for text, scope, words in candidates:
        try:
            rule = parse_rule(text)
        except RuleError:
            continue
        if is_code_execution_rule(rule) or any(s.rule == text for s in out) or not _covers(rule, facts, words):
            continue
        out.append(RuleSuggestion(rule=text, scope=scope))
    return out[:MAX_SUGGESTIONS]
