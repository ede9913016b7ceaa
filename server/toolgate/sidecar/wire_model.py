"""The base of every wire-protocol model (camelCase on the wire, unknown keys refused) and the session id type.

Kept apart from `protocol.py` so that a family of methods can define its models (and list its methods) in its
own module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError


class JsonText:
    """A request's result already written as JSON (UTF-8): the protocol puts it into the answer as it is. (A plain
    class: pygls's converter would make a dict of a dataclass.)"""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


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

    def wire_answer(self) -> JsonText | dict[str, Any]:
        """The model as a request's result: its JSON written once, by pydantic. (`wire()` and then json.dumps, with
        pygls's converter walking the dict on the way, cost four times as much: 11 µs for one Read's result.)

        pydantic writes a float that JSON cannot hold as null, as `wire()` already does for untyped values; no result
        model has a float field. Text it cannot write (a lone surrogate, from bytes that were not UTF-8) is left to
        the dict, which json.dumps writes as an escape, as before."""
        try:
            return JsonText(self.model_dump_json(by_alias=True).encode())
        except PydanticSerializationError:
            return self.wire()

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
