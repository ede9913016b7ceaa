"""The answer to `toolgate/settings/get` (and to every rule change): a session's settings, as structure.

Each problem and each rule carries its file, line and column, and the settings files come by scope, so the
extension only draws them: it never parses a sentence or works out where a file lives. This module knows no
transport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolgate.core.permission import PermissionMode, RuleScope
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.edit_rules import list_rules
from toolgate.permissions.sources import RuleProblem
from toolgate.sidecar.protocol import ReviewEdits, RuleEntry, Settings, SettingsProblem
from toolgate.sidecar.protocol_sandbox import SandboxStatus

if TYPE_CHECKING:
    from toolgate.sandbox.runtime import SandboxState

_FILE_SCOPES: tuple[RuleScope, ...] = ("local", "project", "user")


def wire_problem(problem: RuleProblem) -> SettingsProblem:
    path = problem.source.path
    return SettingsProblem(
        file=str(path) if path else None,
        line=problem.line,
        column=problem.column,
        rule=problem.rule,
        message=problem.sentence,
    )


def sandbox_status(state: SandboxState) -> SandboxStatus:
    detail = state.describe() if state.active else state.detail
    return SandboxStatus(state=state.status, auto_allow=state.auto_allow, detail=detail, network=list(state.network))


def settings_answer(
    engine: PermissionEngine,
    session_id: str,
    mode: PermissionMode,
    review_edits: ReviewEdits,
    sandbox: SandboxState | None = None,
) -> Settings:
    engine.refresh()  # a settings file fixed by hand shows as fixed
    return Settings(
        session_id=session_id,
        mode=mode,
        review_edits=review_edits,
        rules=[RuleEntry.model_validate(listing.model_dump()) for listing in list_rules(engine)],
        settings_files={scope: str(path) for scope in _FILE_SCOPES if (path := engine.settings_file(scope))},
        flag_files=[str(path) for path in engine.book.flag_files],
        problems=[wire_problem(problem) for problem in engine.settings_problems],
        sandbox=sandbox_status(sandbox) if sandbox is not None else None,
    )
