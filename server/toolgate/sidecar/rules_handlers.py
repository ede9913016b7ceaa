"""toolgate/settings/addRule|removeRule and toolgate/permissions/check: the rules a person edits from the panel
("Always allow", the rules view) and the check that tells whether an edited rule still covers its call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from toolgate.sidecar import protocol as p
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:  # types only: the server imports this module before initialize
    from toolgate.sidecar.editor_sessions import EditorSession


def rules_handlers(session_of: Callable[[str], EditorSession]) -> dict[str, Callable[[Any], Awaitable[WireModel]]]:
    """The three methods, for the server's handler table (`session_of` raises the server's error for an unknown
    session)."""

    # The permission modules load with the first session, not before initialize is answered: imported here.
    async def change_rule(params: p.RuleChangeParams, *, add: bool) -> p.RuleChangeResult:
        from toolgate.core.decisions import SavedRule
        from toolgate.permissions.edit_rules import add_rule, remove_rule
        from toolgate.permissions.rules import RuleError
        from toolgate.permissions.settings import SettingsError

        live = session_of(params.session_id)
        change = add_rule if add else remove_rule
        try:
            changed = change(live.runtime.permissions, params.rule, params.scope, params.behavior)
        except (RuleError, SettingsError) as exc:
            raise JsonRpcInvalidParams(message=f"The rule {params.rule!r} was not changed: {exc}") from None
        # An edited "always allow" rule may not match the call it was written for; the person should know.
        covers = None if params.call is None else await live.runtime.check(params.call.tool, params.call.input)
        covered = None if covers is None else covers.decision == "allow"
        decisions = live.runtime.session.decisions
        waiting = None if params.call is None else decisions.waiting_call(params.call.tool, params.call.input)
        if add and waiting is not None:  # for the session's record of the answer
            decisions.rule_saved(waiting, SavedRule(rule=params.rule, scope=params.scope, covers_call=covered))
        return p.RuleChangeResult(
            changed=changed.changed,
            file=changed.file,
            warnings=changed.warnings,
            covers_call=covered,
            settings=live.settings(),
        )

    async def add(params: p.RuleChangeParams) -> p.RuleChangeResult:
        return await change_rule(params, add=True)

    async def remove(params: p.RuleChangeParams) -> p.RuleChangeResult:
        return await change_rule(params, add=False)

    async def check(params: p.PermissionCheckParams) -> p.PermissionCheckResult:
        from toolgate.permissions.rules import RuleError

        live = session_of(params.session_id)
        try:
            result = await live.runtime.check(params.tool, params.input, with_allow=params.with_allow)
        except RuleError as exc:
            raise JsonRpcInvalidParams(message=f"The rule {params.with_allow!r} cannot be used: {exc}") from None
        return p.PermissionCheckResult.model_validate(result.model_dump())

    return {p.SETTINGS_ADD_RULE: add, p.SETTINGS_REMOVE_RULE: remove, p.PERMISSIONS_CHECK: check}
