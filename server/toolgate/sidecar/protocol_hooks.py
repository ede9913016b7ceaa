"""Wire models of a session's hooks for the panel: every hook with its trust state, and trusting the workspace's
hooks waiting for review (`HOOKS_METHODS`, joined into `protocol.METHODS`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from toolgate.sidecar.wire_model import Method, SessionId, WireModel

HOOKS_LIST = "toolgate/hooks/list"
HOOKS_TRUST = "toolgate/hooks/trust"


class HookInfo(WireModel):
    id: str = Field(description="What names the hook: the first characters of its digest.")
    event: str
    matcher: str
    command: str = Field(description="The exact command, to be read before it is trusted.")
    source: str = Field(description="user, flag, project or local.")
    path: str | None = Field(description="The settings file it comes from.")
    state: Literal["own", "trusted", "waiting", "workspace_not_trusted"] = Field(
        description="own: from the person's settings, runs; trusted: a reviewed workspace hook, runs; waiting: a new "
        "or changed workspace hook, does not run until trusted; workspace_not_trusted: never runs here."
    )


class HooksListParams(WireModel):
    session_id: SessionId


class HooksListResult(WireModel):
    hooks: list[HookInfo]


class HooksTrustParams(WireModel):
    session_id: SessionId
    ids: list[str] = Field(min_length=1, description="Ids of workspace hooks the person reviewed.")


HOOKS_METHODS: tuple[Method, ...] = (
    Method(HOOKS_LIST, "clientToServer", HooksListParams, HooksListResult, "A session's hooks and their trust."),
    Method(
        HOOKS_TRUST,
        "clientToServer",
        HooksTrustParams,
        HooksListResult,
        "Trust workspace hooks the person reviewed (recorded in the user settings); the hooks after it.",
    ),
)
