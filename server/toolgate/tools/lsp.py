"""LSP: the editor's language features as one read-only tool (definition, references, implementations, hover,
symbols, call hierarchy), offered only when an editor is attached.

One tool with an `operation`, named as in Claude Code's tool of the same purpose, which current models have been
trained on; Rename is a tool of its own because it writes. A position is a symbol and the text of its line
(`text/symbol_position.py`), never a column. Lists are capped and the cap announced, as Grep's are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import anyio
from pydantic import Field

from toolgate.core.code_intel import IntelAnswer, IntelLocation, IntelQuery, Operation
from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError, ToolError
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Tool, ToolInput
from toolgate.text.pagination import page_notice, paginate
from toolgate.tools._code_intel import IntelInputError, LocationText, ask_editor, editor_intel, place_symbol
from toolgate.tools._search import join_notes

MAX_ITEMS = 100
MAX_HOVER_CHARS = 8_000

LspOperation = Literal[
    "goToDefinition",
    "findReferences",
    "goToImplementation",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "incomingCalls",
    "outgoingCalls",
]
_OPERATIONS: dict[str, Operation] = {
    "goToDefinition": "definition",
    "findReferences": "references",
    "goToImplementation": "implementations",
    "hover": "hover",
    "documentSymbol": "document_symbols",
    "workspaceSymbol": "workspace_symbols",
    "incomingCalls": "incoming_calls",
    "outgoingCalls": "outgoing_calls",
}
_NOUNS = {
    "definition": ("definitions", "definition of"),
    "references": ("references", "references to"),
    "implementations": ("implementations", "implementations of"),
    "incoming_calls": ("callers", "calls to"),
    "outgoing_calls": ("callees", "calls made by"),
}


class LspInput(ToolInput):
    operation: LspOperation = Field(description="What to ask the editor's language features.")
    file_path: str | None = Field(
        default=None, description="The file the symbol is in (every operation but workspaceSymbol)."
    )
    symbol: str | None = Field(
        default=None, description="The name to ask about, exactly as written (not for documentSymbol)."
    )
    line_text: str | None = Field(
        default=None,
        description="The text of the line the symbol is on, copied from Read (without the line number); "
        "leading and trailing whitespace do not matter.",
    )
    line: int | None = Field(
        default=None, ge=1, description="Its line number, to choose between lines that read alike."
    )
    occurrence: int | None = Field(
        default=None, ge=1, description="Which use of the symbol on that line, counted from 1, when it is used twice."
    )
    query: str | None = Field(default=None, description="workspaceSymbol: the (part of a) name to search for.")
    offset: int = Field(default=0, ge=0, description="Skip this many results (for the next page of a long list).")


# What a call hands to `to_result`: the question, the answer, and (hover only) where the symbol is defined.
_Answered = tuple[LspInput, IntelAnswer, list[IntelLocation] | None]


class LspTool(Tool[LspInput, _Answered]):
    name = "LSP"
    traits = LOOKS_ONLY
    input_model = LspInput

    def __init__(self, languages: Callable[[], frozenset[str] | None] = lambda: None) -> None:
        # Read at every description: the editor reports its languages once a session is attached.
        self._languages = languages

    def description(self, ctx: DescribeContext) -> str:
        return (
            "Ask the editor's language features (the language servers the user has installed; they read the "
            "editor's unsaved buffers too) about code.\n"
            "- goToDefinition, findReferences, goToImplementation, hover (type and documentation), incomingCalls, "
            "outgoingCalls: give file_path, symbol and line_text (the line the symbol is on, copied from Read); "
            "add line when several lines read alike, occurrence when the symbol is used twice on its line. Never "
            "give columns.\n"
            "- documentSymbol: the outline of file_path. workspaceSymbol: symbols whose name matches query.\n"
            f"- Lists show at most {MAX_ITEMS} results; offset pages on. Locations outside the working directories "
            "are listed but not quoted; those in files a permission rule guards, and in credential files, are left "
            "out (counted).\n"
            "- Prefer it to Grep for where a name is defined or used: it knows scopes, imports and overloads."
            f"{languages_clause(self._languages())}"
        )

    def paths(self, tool_input: LspInput, ctx: ToolContext) -> Sequence[Path]:
        return [ctx.resolve_path(tool_input.file_path)] if tool_input.file_path else []

    def summary(self, tool_input: LspInput, workspace: Path) -> str:
        if tool_input.operation == "workspaceSymbol":
            return f"workspaceSymbol {tool_input.query!r}"
        where = display_input_path(tool_input.file_path or "", workspace)
        return f"{tool_input.operation} {tool_input.symbol or ''} in {where}".replace("  ", " ")

    async def validate(self, tool_input: LspInput, ctx: ToolContext) -> None:
        operation = _OPERATIONS[tool_input.operation]
        if operation == "workspace_symbols":
            if not tool_input.query:
                raise IntelInputError("workspaceSymbol needs query: the name, or part of it, to search for.")
            return
        if not tool_input.file_path:
            raise IntelInputError(f"{tool_input.operation} needs file_path: the file to ask about.")
        if operation != "document_symbols" and not (tool_input.symbol and tool_input.line_text):
            raise IntelInputError(
                f"{tool_input.operation} needs symbol and line_text: the name, and the line it is on as Read shows it."
            )

    async def call(self, tool_input: LspInput, ctx: ToolContext) -> _Answered:
        editor_intel(ctx)
        operation = _OPERATIONS[tool_input.operation]
        query = IntelQuery(operation=operation, query=tool_input.query)
        if tool_input.file_path:
            path = ctx.resolve_path(tool_input.file_path)
            query.path = str(path)
            if tool_input.symbol and operation != "document_symbols":
                position = await anyio.to_thread.run_sync(
                    place_symbol, ctx, path, tool_input.symbol, tool_input.line_text, tool_input.line,
                    tool_input.occurrence,
                )  # fmt: skip
                query.line, query.character = position.line, position.character
        answer = await ask_editor(ctx, query, tool_input.operation)
        return tool_input, answer, await _hover_sources(ctx, query) if operation == "hover" and answer.hover else []

    def to_result(self, data: _Answered, ctx: ToolContext) -> str:
        tool_input, answer, sources = data
        operation = _OPERATIONS[tool_input.operation]
        if operation == "hover":
            return _hover(tool_input, answer, sources, LocationText(ctx))
        shown = LocationText(ctx)
        locations, left_out = (
            (answer.locations, "") if operation == "document_symbols" else shown.readable(answer.locations)
        )
        page = paginate(len(locations), tool_input.offset, MAX_ITEMS)
        if operation == "document_symbols":
            head = f"Symbols of {display_path(ctx.resolve_path(tool_input.file_path or ''), ctx.workspace)}"
            noun = "symbols"
            body = [
                f"{'  ' * loc.depth}{loc.kind or 'Symbol'} {loc.name} (line {loc.span.start_line + 1})"
                for loc in locations[page.start : page.stop]
            ]
        elif operation == "workspace_symbols":
            head, noun = f"Symbols matching {tool_input.query!r}", "symbols"
            body = [
                f"{loc.kind or 'Symbol'} {loc.name}"
                + (f" in {loc.container}" if loc.container else "")
                + f" — {shown.show(loc)}"
                for loc in locations[page.start : page.stop]
            ]
        else:
            noun, phrase = _NOUNS[operation]
            head = f"{phrase.capitalize()} {tool_input.symbol}"
            named = operation in ("incoming_calls", "outgoing_calls")
            body = [
                (f"{loc.name} — " if named and loc.name else "") + shown.show(loc)
                for loc in locations[page.start : page.stop]
            ]
        if not locations:
            return join_notes(f"{head}: none found.", [left_out])
        lines = [f"{head} ({len(locations)} {noun if len(locations) != 1 else noun.rstrip('s')}):", *body]
        notice = page_notice(page, noun, narrow="narrow the question")
        return join_notes("\n".join([*lines, notice] if notice else lines), [left_out])


async def _hover_sources(ctx: ToolContext, query: IntelQuery) -> list[IntelLocation] | None:
    """Where the hovered symbol is defined (None: the editor could not say). Hover quotes the definition's
    documentation, so it is held to the rule its lines are: a guarded file's text is not quoted."""
    try:
        return (await ask_editor(ctx, query.model_copy(update={"operation": "definition"}), "goToDefinition")).locations
    except (ToolError, StateError):
        return None


def _hover(tool_input: LspInput, answer: IntelAnswer, sources: list[IntelLocation] | None, shown: LocationText) -> str:
    text = "\n\n".join(part.strip() for part in answer.hover if part.strip())
    if not text:
        return f"The editor shows nothing when hovering {tool_input.symbol}."
    if sources is None:
        return (
            f"The hover on {tool_input.symbol} is not shown: the editor could not say where {tool_input.symbol} is "
            "defined, so toolgate cannot tell whether a permission rule guards the text it would quote. Use "
            "goToDefinition and Read instead."
        )
    guarded = [location for location in sources if shown.guarded(Path(location.path))]
    if guarded:
        return (
            f"The hover on {tool_input.symbol} is not shown: it quotes {shown.where(guarded[0])}, which a permission "
            "rule or its credentials keep from being read freely."
        )
    if len(text) > MAX_HOVER_CHARS:
        hidden = len(text) - MAX_HOVER_CHARS
        text = text[:MAX_HOVER_CHARS] + f"\n… ({hidden:,} more characters not shown; Read the definition instead)"
    return f"Hover on {tool_input.symbol}:\n{text}"


def languages_clause(languages: frozenset[str] | None) -> str:
    """Which languages the editor said it has these features for (what the model may expect to work)."""
    if languages is None:
        return ""
    if not languages:
        return "\n- The editor reported no language with these features yet; a call may find no provider."
    return f"\n- The editor has these features for: {', '.join(sorted(languages))}."
