"""Editing rules: list them, add one, remove one — in session memory or in a settings file.

    list_rules(engine)                                  every rule in force, deny first, with where it comes from
    add_rule(engine, rule, scope, behavior)             an "always allow" answer, or a rule the user typed
    remove_rule(engine, rule, scope, behavior)

A change to a settings file goes through `settings.update_settings`; a session rule lives in the engine's
`session_rules`. Either way the engine is reloaded afterwards, so the next decision sees the change.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from toolgate.core.permission import RuleScope
from toolgate.permissions.decide import PermissionEngine, code_execution_warning
from toolgate.permissions.rules import Behavior, parse_rule
from toolgate.permissions.settings import (
    SettingsError,
    add_rule_mutation,
    exclude_from_git,
    remove_rule_mutation,
    update_settings,
)
from toolgate.permissions.sources import BEHAVIORS
from toolgate.permissions.trust import TRUST_HINT


class RuleListing(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    rule: str
    behavior: Behavior
    source: str
    file: str | None = None
    line: int | None = None  # where the rule sits in `file` (1-based)
    column: int | None = None
    warning: str | None = None


class RuleChange(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    rule: str
    behavior: Behavior
    scope: RuleScope
    file: str | None = None
    changed: bool
    warnings: list[str] = []


def list_rules(engine: PermissionEngine) -> list[RuleListing]:
    return [
        RuleListing(
            rule=e.rule.text,
            behavior=e.behavior,
            source=e.source.name,
            file=str(e.source.path) if e.source.path else None,
            line=e.line,
            column=e.column,
            warning=code_execution_warning(e.rule.text) if e.code_execution else None,
        )
        for behavior in BEHAVIORS
        for e in engine.book.of(behavior)
    ]


def add_rule(
    engine: PermissionEngine, rule: str, scope: RuleScope = "session", behavior: Behavior = "allow"
) -> RuleChange:
    """Keep a rule in `scope` and honour it from the next decision on. Raises RuleError/SettingsError."""
    return _change(engine, rule, scope, behavior, add=True)


def remove_rule(
    engine: PermissionEngine, rule: str, scope: RuleScope = "session", behavior: Behavior = "allow"
) -> RuleChange:
    return _change(engine, rule, scope, behavior, add=False)


def _change(engine: PermissionEngine, rule: str, scope: RuleScope, behavior: Behavior, add: bool) -> RuleChange:
    parsed = parse_rule(rule)  # RuleError: the caller shows the reason
    path = engine.settings_file(scope)
    session_rules = engine.session_rules[behavior]
    if path is None:
        changed = (rule not in session_rules) if add else (rule in session_rules)
        if add and changed:
            session_rules.append(rule)
        elif not add:
            session_rules[:] = [r for r in session_rules if r != rule]
    else:
        existed = path.exists()
        mutation = add_rule_mutation(behavior, rule) if add else remove_rule_mutation(behavior, rule)
        changed = update_settings(path, mutation)
        if scope == "local" and not existed and path.exists():
            exclude_from_git(path)
    warnings = []
    if add and behavior == "allow" and scope in ("local", "project") and not engine.book.workspace_trusted:
        # Saved, but the workspace's own files only restrict until it is trusted: keep the rule for this
        # session, and say how to make it last.
        if rule not in session_rules:
            session_rules.append(rule)
        warnings.append(
            f"{rule} was saved to {path}, but this workspace is not trusted, so that file's allow rules are "
            "ignored: it applies for this session only. " + TRUST_HINT.format(workspace=engine.workspace) + "."
        )
    engine.reload()
    if add and behavior == "allow" and any(e.code_execution for e in engine.book.entries if e.rule == parsed):
        warnings.append(code_execution_warning(rule))
    return RuleChange(
        rule=rule,
        behavior=behavior,
        scope=scope,
        file=str(path) if path else None,
        changed=changed,
        warnings=warnings,
    )


__all__ = ["RuleChange", "RuleListing", "SettingsError", "add_rule", "list_rules", "remove_rule"]
