"""What the editor's language features answer, as the tools see it: the questions, the answers, and the seam.

An editor-attached session has a `CodeIntel` (the sidecar asks the editor, which asks its language servers, and
those read the live buffers); a headless one has none, and the code-intelligence tools are not offered there.
Positions are LSP's: 0-based lines, `character` in UTF-16 code units. Paths are absolute.

The models are camelCase by alias so that the sidecar's wire models can derive from them unchanged.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from toolgate.core.deps import Dep

Operation = Literal[
    "definition",
    "references",
    "implementations",
    "hover",
    "document_symbols",
    "workspace_symbols",
    "incoming_calls",
    "outgoing_calls",
    "rename",
]


class IntelModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True)


class Span(IntelModel):
    start_line: int = Field(ge=0)
    start_character: int = Field(ge=0)
    end_line: int = Field(ge=0)
    end_character: int = Field(ge=0)


class IntelLocation(IntelModel):
    """A place the answer points at: a definition, a reference, a symbol, a caller or a callee."""

    path: str = Field(description="Absolute path of the file.")
    span: Span
    name: str | None = Field(default=None, description="The symbol's name (symbols, call hierarchy).")
    kind: str | None = Field(default=None, description="The symbol's kind as the editor names it (Function, Class…).")
    container: str | None = Field(default=None, description="What the symbol is inside of, when the editor says.")
    depth: int = Field(default=0, ge=0, description="Nesting depth in a document's symbol outline (0: top level).")


class TextEditModel(IntelModel):
    span: Span
    new_text: str


class FileTextEdits(IntelModel):
    path: str
    edits: list[TextEditModel]


class IntelQuery(IntelModel):
    operation: Operation
    path: str | None = Field(default=None, description="The document asked about (all but workspace_symbols).")
    line: int | None = Field(default=None, ge=0)
    character: int | None = Field(default=None, ge=0)
    query: str | None = Field(default=None, description="workspace_symbols: the text to search symbol names for.")
    new_name: str | None = Field(default=None, description="rename: the new name.")


class IntelAnswer(IntelModel):
    provided: bool = Field(description="False: no language feature in the editor answers this for this document.")
    locations: list[IntelLocation] = Field(default_factory=list)
    hover: list[str] = Field(default_factory=list, description="hover: the texts shown (markdown or plain).")
    edits: list[FileTextEdits] = Field(default_factory=list, description="rename: the edit of each file.")
    refused: str | None = Field(
        default=None, description="The language feature's own reason for not answering (e.g. not renameable here)."
    )


class IntelUnavailable(Exception):
    """The editor gave no usable answer: it is gone, it failed, or it did not answer in time."""


class CodeIntel(Protocol):
    @property
    def languages(self) -> frozenset[str] | None:
        """Language ids the editor has these features for, as it reported them; None until it has."""
        ...

    async def ask(self, query: IntelQuery) -> IntelAnswer:
        """The editor's answer; raises IntelUnavailable when there is none to be had (never waits unbounded)."""
        ...


# None: no editor (headless). The sidecar provides one per session.
CODE_INTEL: Dep[CodeIntel | None] = Dep("code_intel", lambda _r: None)
