"""The base of every wire-protocol model (camelCase on the wire, unknown keys refused) and the session id type.

Kept apart from `protocol.py` so that a family of methods can define its models (and list its methods) in its
own module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Base of every protocol model: camelCase on the wire, unknown keys refused (a typo is an error)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        # Built on first use, not at import: start-up needs only InitializationOptions, and every editor
        # window waits for start-up.
        defer_build=True,
    )

    def wire(self) -> dict[str, Any]:
        """The JSON object sent on the wire."""
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_wire(cls, raw: Any) -> Self:
        """Validate a JSON value received on the wire: camelCase names only (Python code may use either)."""
        return cls.model_validate(raw, by_alias=True, by_name=False)


# A session id names a directory under the data root, so it must never be able to climb out of it.
SessionId = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
        description="A session's id: letters, digits, '_', '-' and '.' (not first), at most 128 characters.",
    ),
]


Direction = Literal["clientToServer", "serverToClient"]


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    direction: Direction
    params: type[WireModel]
    result: type[WireModel] | None  # None: a notification
    doc: str
