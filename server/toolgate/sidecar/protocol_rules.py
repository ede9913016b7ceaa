"""The protocol's permission-check models (`toolgate/permissions/check`) and the permission modes' table as the
extension receives it; protocol.py re-exports them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from toolgate.core.permission import MODE_TRAITS, ModeTraits
from toolgate.sidecar.wire_model import SessionId, WireModel

RuleBehavior = Literal["allow", "ask", "deny"]


class PermissionCheckParams(WireModel):
    session_id: SessionId
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    with_allow: str | None = Field(
        default=None,
        description=(
            "Decide as if this allow rule were in force too, without saving it: whether an edited 'always "
            "allow' rule would cover the waiting call, asked before the rule is saved."
        ),
    )


class PermissionCheckResult(WireModel):
    """The same answer as `toolgate permissions check`: nothing is run."""

    decision: RuleBehavior
    read_only: bool
    reason: str
    rule: str | None = None


class PermissionModeTraits(WireModel, ModeTraits):
    """What one permission mode means (core's ModeTraits, camelCase on the wire)."""


def permission_mode_table() -> list[dict[str, Any]]:
    """Every mode and its traits, in the order a person is offered them: generated into the extension."""
    return [PermissionModeTraits.model_validate(t.model_dump()).wire() for t in MODE_TRAITS.values()]
