"""Wire models of the composer: what a person attaches to a message (`Attachment`, carried by chat/send), and
the model picker's methods (`COMPOSER_METHODS`, joined into `protocol.METHODS`)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from toolgate.sidecar.wire_model import Method, WireModel

MODELS_LIST = "toolgate/models/list"
MODELS_SELECT = "toolgate/models/select"


class Attachment(WireModel):
    """Context the person attached to a message, named, never carried: the sidecar reads files and folders itself
    (the live buffer for a file with unsaved changes, else the disk), and asks the editor for the problems the way
    the Problems tool does (`toolgate/editor/problems`)."""

    kind: Literal["file", "selection", "folder", "problems"]
    path: str | None = Field(
        default=None, description="Absolute path; required except for problems (none: the whole workspace's)."
    )
    start_line: int | None = Field(default=None, ge=1, description="A selection's first line, 1-based.")
    end_line: int | None = Field(default=None, ge=1, description="A selection's last line, inclusive.")
    label: str | None = Field(default=None, max_length=200, description="What the person picked (a symbol's name).")

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if self.kind != "problems" and not self.path:
            raise ValueError(f"a {self.kind} attachment needs its path")
        if self.kind == "selection" and (self.start_line is None or self.end_line is None):
            raise ValueError("a selection attachment needs startLine and endLine")
        if self.start_line is not None and self.end_line is not None and self.end_line < self.start_line:
            raise ValueError("endLine comes before startLine")
        return self


class ModelsListParams(WireModel):
    configured: list[str] = Field(
        default_factory=list, description="The models the person's settings name (toolgate.models), offered first."
    )


class ModelsListResult(WireModel):
    current: str = Field(description="The model chats use now.")
    models: list[str] = Field(description="The current model, the settings' models, then the provider's list.")
    problem: str | None = Field(default=None, description="Why the provider's API did not list its models.")


class ModelsSelectParams(WireModel):
    model: str = Field(
        min_length=1, max_length=200, pattern=r"^\S+$", description="A model name, as its API spells it."
    )


class ModelsSelectResult(WireModel):
    model: str = Field(description="The model chats use from their next message on.")
    message: str = Field(description="What the person should know (shown in the chat).")


COMPOSER_METHODS: tuple[Method, ...] = (
    Method(MODELS_LIST, "clientToServer", ModelsListParams, ModelsListResult, "The models the picker offers."),
    Method(
        MODELS_SELECT,
        "clientToServer",
        ModelsSelectParams,
        ModelsSelectResult,
        "Switch every chat to a model from its next message on, until the model settings change.",
    ),
)
