"""What "always allow" does in the editor: the chosen rule goes to the session's permission engine, which
keeps it in the scope the user picked (session memory, or a settings file) and honours it from then on."""

from __future__ import annotations

import logging

from toolgate.core.permission import RuleSuggestion
from toolgate.core.session import Session
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.edit_rules import add_rule
from toolgate.permissions.rules import RuleError
from toolgate.permissions.settings import SettingsError

logger = logging.getLogger("toolgate.sidecar.rules")


class EngineRuleMemory:
    """Implements `approvals.RuleMemory` for sessions whose policy is the permission engine."""

    async def remember(self, session: Session, rule: RuleSuggestion) -> None:
        policy = session.policy
        if not isinstance(policy, PermissionEngine):
            logger.warning("the rule %r was not kept: this session has no permission engine", rule.rule)
            return
        try:
            change = add_rule(policy, rule.rule, rule.scope, "allow")
        except (RuleError, SettingsError) as exc:
            # The call itself was approved; only the "always" part failed. Say why, and the user is asked again.
            logger.warning("the rule %r (%s scope) was not kept: %s", rule.rule, rule.scope, exc)
            return
        for warning in change.warnings:
            logger.warning("%s", warning)
