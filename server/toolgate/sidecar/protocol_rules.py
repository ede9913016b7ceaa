"""The protocol's permission-check models (`toolgate/permissions/check`); protocol.py re-exports them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

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
