"""Wire model of a session's Bash sandbox, as `toolgate/settings/get` reports it (`Settings.sandbox`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from toolgate.sidecar.wire_model import Method, WireModel


class SandboxStatus(WireModel):
    """What the chat panel's header shows: whether Bash commands run sandboxed in this session, and why not."""

    state: Literal["on", "off", "unavailable"] = Field(
        description="on: commands run sandboxed; off: turned off in the settings; unavailable: asked for but "
        "cannot run here (the detail says why and what to do)."
    )
    auto_allow: bool = Field(description="Commands that only write or run code inside the workspace run unasked.")
    detail: str = Field(description="Which sandbox runs them, or why none does.")
    network: list[str] = Field(default_factory=list, description="The Network(domain:…) rules its proxy allows.")


class StandInsParams(WireModel):
    """The sandbox's stand-ins that exist now, in every session of this sidecar."""

    paths: list[str] = Field(
        description="Absolute paths of the empty read-only directories the sandbox made in the workspace as mount "
        "points for absent protected names (`.vscode`, `.envrc`, `AGENTS.md`, ...) while commands run; the editor "
        "marks them in the Explorer."
    )


SANDBOX_STAND_INS = "toolgate/sandbox/standIns"

SANDBOX_METHODS: tuple[Method, ...] = (
    Method(
        SANDBOX_STAND_INS,
        "serverToClient",
        StandInsParams,
        None,
        "The sandbox's stand-in directories changed (made before a command, removed after): all that exist now.",
    ),
)
