"""The tool contract. One base class holds every fail-closed default in one place.

A tool that forgets to answer a question is treated as the most dangerous kind of tool: it writes, it
must run alone, and its permission is decided by the policy (which asks when nothing allows it).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from toolgate.core.messages import ToolResultContent
from toolgate.core.permission import FileProposal, PermissionCheck, PermissionMode

if TYPE_CHECKING:  # annotations only: the sidecar's protocol (ToolDefinition) is imported before initialize
    from toolgate.core.context import ToolContext


def _scalar_kind(annotation: Any) -> type | None:
    """bool, int or float when the field holds only that scalar (or null); None for anything else."""
    args = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    kinds = [a for a in args if a is not type(None)]
    return kinds[0] if len(kinds) == 1 and kinds[0] in (bool, int, float) else None


# `_scalar_kind` of each input model's fields, by model and field name: the strict-scalar check runs for every field
# of every call, and working the kind out of the annotation each time was most of a small input's validation.
# Input models are classes defined once, so this stays as small as the set of tools.
_FIELD_KINDS: dict[tuple[type[Any], str], type | None] = {}
_UNKNOWN: Any = object()


class ToolInput(BaseModel):
    """Base for every tool's input: unknown keys are an error (the schema says additionalProperties: false).

    Booleans and numbers are strict: a model that sends `"yes"`, `1` or even `"true"` for a boolean, or
    `"5"` or `5.5` for an integer, gets an invalid_input error naming the field, never a guess. (Strings are
    refused even when they spell true/false: the schema says boolean, and a guess that reads `"false"` as
    true somewhere would be worse than one retry.)"""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        key = (cls, info.field_name or "")
        if (kind := _FIELD_KINDS.get(key, _UNKNOWN)) is _UNKNOWN:
            field = cls.model_fields.get(key[1])
            kind = _FIELD_KINDS[key] = _scalar_kind(field.annotation) if field is not None else None
        if kind is None or value is None:
            return value
        if kind is bool and not isinstance(value, bool):
            raise PydanticCustomError("bool_type", "Input should be a valid boolean")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        if kind is float and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise PydanticCustomError("float_type", "Input should be a valid number")
        return value


InputT = TypeVar("InputT", bound=ToolInput)
DataT = TypeVar("DataT")


@dataclass(frozen=True, slots=True)
class DescribeContext:
    """What a description may depend on: which tools exist and which mode is active."""

    tool_names: frozenset[str]
    mode: PermissionMode
    workspace: Path


@dataclass(frozen=True, slots=True)
class Rendered:
    """A tool_result body with an explicit error flag, for tools whose failures still carry output."""

    content: ToolResultContent
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ToolTraits:
    """What a tool is, declared once on its class; the runner, the permission facts and the MCP server's
    annotations all read it. The defaults are the fail-closed answer: writes, runs alone, may destroy, a repeated
    call may do something new, and it reaches outside the workspace."""

    read_only: bool = False
    concurrency_safe: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True

    def __post_init__(self) -> None:
        if self.read_only and self.destructive:
            raise ValueError("a tool that only reads cannot also be destructive")


# Tools that only look inside the workspace: read-only, run beside other lookups, destroy nothing, answer alike twice.
LOOKS_ONLY = ToolTraits(read_only=True, concurrency_safe=True, destructive=False, idempotent=True, open_world=False)


class ToolDefinition(BaseModel):
    """What a model is told about a tool (Anthropic's tool shape; other providers convert from it)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    description: str
    input_schema: dict[str, Any]


def _clean_schema(node: Any) -> Any:
    """Drop pydantic's `title` noise; keep everything a model needs (types, descriptions, enums, bounds)."""
    if isinstance(node, dict):
        return {k: _clean_schema(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_clean_schema(v) for v in node]
    return node


class Tool(ABC, Generic[InputT, DataT]):
    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    input_model: ClassVar[type[ToolInput]]
    # External (MCP) tools are listed after every built-in one, so the built-in block is a stable prefix.
    external: ClassVar[bool] = False
    # A result longer than this many characters is moved to the session's output store (None: never).
    max_result_chars: ClassVar[int | None] = 50_000
    # Declared once per tool; a tool whose answer depends on its input (Bash) overrides the methods below.
    traits: ClassVar[ToolTraits] = ToolTraits()

    # --- what the model is told ----------------------------------------------------------------------
    @abstractmethod
    def description(self, ctx: DescribeContext) -> str:
        """Computed per call from the context, not a constant."""

    def input_schema(self) -> dict[str, Any]:
        schema = _clean_schema(self.input_model.model_json_schema(by_alias=True))
        schema.setdefault("additionalProperties", False)
        return dict(copy.deepcopy(schema))

    def definition(self, ctx: DescribeContext) -> ToolDefinition:
        return ToolDefinition(name=self.name, description=self.description(ctx), input_schema=self.input_schema())

    # --- properties of the arguments (the traits, unless the input changes the answer) ----------------------
    def is_read_only(self, tool_input: InputT) -> bool:
        return self.traits.read_only

    def is_concurrency_safe(self, tool_input: InputT) -> bool:
        return self.traits.concurrency_safe

    def is_destructive(self, tool_input: InputT) -> bool:
        return self.traits.destructive

    def paths(self, tool_input: InputT, ctx: ToolContext) -> Sequence[Path]:
        """The absolute paths this call reads or writes, for permission checks. Tools with paths must say."""
        return ()

    def moved_from(self, tool_input: InputT, ctx: ToolContext) -> Mapping[Path, Path]:
        """The files this call moves, as new absolute path -> old absolute path (both among `paths`); most move none."""
        return {}

    def summary(self, tool_input: InputT, workspace: Path) -> str:
        """What this call does, in one line a person can read; the UI shows it after the tool's name, so it does
        not repeat the name (`src/app.py (lines 1–40)` for a Read, the command itself for Bash). Paths inside
        `workspace` are shown relative to it (`display_input_path`); a command is shown exactly as it runs."""
        return tool_input.model_dump_json(by_alias=True, exclude_defaults=True)

    async def propose(self, tool_input: InputT, ctx: ToolContext) -> list[FileProposal] | None:
        """For tools that write files: the full original and proposed text of each file, for a diff review.

        Called after `validate`, before permission is asked. A reviewed (maybe edited) result reaches
        `call` as `ctx.reviewed`, which the tool must then write instead of its own proposal.
        """
        return None

    # --- the pipeline ----------------------------------------------------------------------------------
    async def validate(self, tool_input: InputT, ctx: ToolContext) -> None:
        """Is this call coherent with the current state? Raise StateError to explain why not to the model."""
        return None

    async def check_permissions(self, tool_input: InputT, ctx: ToolContext) -> PermissionCheck:
        """The tool's own permission opinion; shown to the human. Default: no opinion."""
        return PermissionCheck.passthrough()

    @abstractmethod
    async def call(self, tool_input: InputT, ctx: ToolContext) -> DataT:
        """Do the work; return internal data (the model sees `to_result(data)`)."""

    @abstractmethod
    def to_result(self, data: DataT, ctx: ToolContext) -> ToolResultContent | Rendered:
        """Map internal data to the tool_result content the model reads."""


AnyTool = Tool[Any, Any]
