"""Wire models of the panel's session history: renaming, searching and exporting stored sessions
(`SESSIONS_METHODS`, joined into `protocol.METHODS`). Listing, opening and deleting are in protocol.py."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from toolgate.sidecar.wire_model import Method, SessionId, WireModel

SESSION_RENAME = "toolgate/session/rename"
SESSION_SEARCH = "toolgate/session/search"
SESSION_EXPORT = "toolgate/session/export"

TITLE_MAX_CHARS = 200
SEARCH_MAX_CHARS = 200


class SessionRenameParams(WireModel):
    session_id: SessionId
    title: str = Field(min_length=1, max_length=TITLE_MAX_CHARS, description="The title the person chose.")

    @field_validator("title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("a title needs at least one character that is not a space")
        return value


class SessionRenameResult(WireModel):
    title: str = Field(description="The title as stored (runs of white space made one space).")


class SessionSearchParams(WireModel):
    query: str = Field(min_length=1, max_length=SEARCH_MAX_CHARS, description="Matched without regard to case.")


class SessionMatch(WireModel):
    session_id: SessionId
    in_title: bool = Field(description="The title holds the query.")
    snippet: str | None = Field(
        default=None, description="Where a prompt or an answer holds it, a little of the text around it."
    )


class SessionSearchResult(WireModel):
    matches: list[SessionMatch] = Field(description="Sessions whose title or conversation holds the query.")


ExportFormat = Literal["markdown", "json"]


class SessionExportParams(WireModel):
    session_id: SessionId
    format: ExportFormat


class SessionExportResult(WireModel):
    content: str = Field(description="The whole document, to be saved where the person chooses.")
    file_name: str = Field(description="A file name to suggest, from the title (no directory).")


SESSIONS_METHODS: tuple[Method, ...] = (
    Method(SESSION_RENAME, "clientToServer", SessionRenameParams, SessionRenameResult, "Give a session a title."),
    Method(
        SESSION_SEARCH,
        "clientToServer",
        SessionSearchParams,
        SessionSearchResult,
        "The stored sessions whose title or prompts and answers hold some text.",
    ),
    Method(
        SESSION_EXPORT,
        "clientToServer",
        SessionExportParams,
        SessionExportResult,
        "A stored session as a readable Markdown document or as JSON.",
    ),
)
