"""What the permission ladder may know about containment, without importing the sandbox.

The sandbox (`toolgate.sandbox`) sits above the permission engine: it reads the engine's network and safety
tables, so the engine must not import it back. The ladder's sandbox step ("a Bash call that runs contained may
skip the ask whose only reason the sandbox covers") asks this dependency instead. Its default contains nothing,
so a session nobody wired to a sandbox removes no ask (fail closed); `toolgate.runtime` points it at the
session's sandbox.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from toolgate.core.deps import Dep


class Containment(Protocol):
    def auto_allows(self, tool_name: str, tool_input: BaseModel) -> bool:
        """Whether this call will run contained, with the containment's own auto-allow switched on."""
        ...


class NotContained:
    """No containment: every ask stays an ask."""

    def auto_allows(self, tool_name: str, tool_input: BaseModel) -> bool:
        return False


CONTAINMENT: Dep[Containment] = Dep("containment", lambda _r: NotContained())
