"""Wire model of a session's Bash sandbox, as `toolgate/settings/get` reports it (`Settings.sandbox`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from toolgate.sidecar.wire_model import WireModel


class SandboxStatus(WireModel):
    """What the chat panel's header shows: whether Bash commands run sandboxed in this session, and why not."""

    state: Literal["on", "off", "unavailable"] = Field(
        description="on: commands run sandboxed; off: turned off in the settings; unavailable: asked for but "
        "cannot run here (the detail says why and what to do)."
    )
    auto_allow: bool = Field(description="Commands that only write or run code inside the workspace run unasked.")
    detail: str = Field(description="Which sandbox runs them, or why none does.")
    network: list[str] = Field(default_factory=list, description="The Network(domain:…) rules its proxy allows.")
