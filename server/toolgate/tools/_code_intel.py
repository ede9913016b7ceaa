"""What LSP and Rename share: asking the editor, placing a symbol, and showing a location to the model.

The text a position is found in is the editor's live buffer when the file is open there (that is what its
language servers read), the file on disk otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from toolgate.core.code_intel import CODE_INTEL, CodeIntel, IntelAnswer, IntelLocation, IntelQuery, IntelUnavailable
from toolgate.core.context import ToolContext
from toolgate.core.documents import OPEN_DOCUMENTS
from toolgate.core.errors import ErrorKind, StateError, ToolError
from toolgate.core.paths import display_path, inside_any
from toolgate.text.encoding import UndecodableError, decode
from toolgate.text.symbol_position import PositionError, SymbolPosition, locate_symbol, split_lines
from toolgate.tools._files import missing_message
from toolgate.tools._search import ReadDenyFilter

# A document bigger than this is not searched for the symbol's line (the language server may still know it).
MAX_DOCUMENT_BYTES = 10 * 1024 * 1024


class IntelInputError(ToolError):
    kind = ErrorKind.INVALID_INPUT


def editor_intel(ctx: ToolContext) -> CodeIntel:
    intel = ctx.get(CODE_INTEL)
    if intel is None:
        raise StateError(
            "No editor is attached to this session, so its language features cannot be asked. Use Grep and Read."
        )
    return intel


async def ask_editor(ctx: ToolContext, query: IntelQuery, what: str) -> IntelAnswer:
    """The editor's answer, or a ToolError saying why there is none and what to do instead."""
    try:
        answer = await editor_intel(ctx).ask(query)
    except IntelUnavailable as exc:
        raise ToolError(
            f"The editor gave no answer for {what} ({exc}). Nothing was changed. Try once more; if it fails again, "
            "use Grep and Read instead."
        ) from None
    if answer.refused:
        raise StateError(f"The editor's language feature declined {what}: {answer.refused}")
    if not answer.provided:
        where = f" for {display_path(Path(query.path), ctx.workspace)}" if query.path else ""
        raise StateError(
            f"No language feature in the editor answers {what}{where} (no language server for this kind of "
            "file, or it does not offer this). Use Grep and Read instead."
        )
    return answer


def document_text(ctx: ToolContext, path: Path) -> str:
    """The live buffer when the editor has the file open, else the file on disk; a StateError when neither."""
    live = ctx.get(OPEN_DOCUMENTS).text(path)
    if live is not None:
        return live
    shown = display_path(path, ctx.workspace)
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise StateError(f"{shown} is over {MAX_DOCUMENT_BYTES // 1024 // 1024} MiB; it is not searched here.")
        return decode(path.read_bytes()).text.replace("\r\n", "\n")
    except (FileNotFoundError, NotADirectoryError):
        raise StateError(missing_message(path, ctx)) from None
    except IsADirectoryError:
        raise StateError(f"{shown} is a directory; name a file.") from None
    except UndecodableError as exc:
        raise StateError(f"{shown} cannot be decoded as text ({exc}).") from None
    except OSError as exc:
        raise StateError(f"{shown} cannot be read: {exc.strerror or exc}.") from None


def place_symbol(
    ctx: ToolContext, path: Path, symbol: str, line_text: str | None, line: int | None, occurrence: int | None
) -> SymbolPosition:
    try:
        return locate_symbol(document_text(ctx, path), symbol, line_text, line, occurrence)
    except PositionError as exc:
        raise IntelInputError(f"In {display_path(path, ctx.workspace)}: {exc}") from None


class LocationText:
    """Shows locations as `path:line` with the line's text, reading each file at most once. A file outside
    the session's working directories is named but not read: reading it is a Read, which the ladder judges. A file a
    Read rule guards, or a credential file, is left out altogether (`readable`), as Grep leaves it out: the names it
    defines and the lines where it uses a name are its content."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx
        self._lines: dict[Path, list[str] | None] = {}
        self._guard = ReadDenyFilter.for_session(ctx, credentials=True)

    def readable(self, locations: Sequence[IntelLocation]) -> tuple[list[IntelLocation], str]:
        """The locations in files that may be read freely, and a note saying how many were left out (or "")."""
        kept = [location for location in locations if not self.guarded(Path(location.path))]
        left_out = len(locations) - len(kept)
        if not left_out:
            return kept, ""
        are = "location is" if left_out == 1 else "locations are"
        return kept, (
            f"{left_out:,} {are} left out: their files are guarded by a permission rule or hold credentials (.env "
            "files, keys), and what such a file holds, its names included, is shown only through Read, which asks."
        )

    def where(self, location: IntelLocation) -> str:
        # No column: the line's text says where, and a column in UTF-16 units would mislead more than help.
        return f"{display_path(Path(location.path), self._ctx.workspace)}:{location.span.start_line + 1}"

    def line(self, location: IntelLocation) -> str | None:
        path = Path(location.path)
        if path not in self._lines:
            self._lines[path] = self._read(path)
        lines = self._lines[path]
        if lines is None or location.span.start_line >= len(lines):
            return None
        return lines[location.span.start_line].strip()

    def outside(self, location: IntelLocation) -> bool:
        return not inside_any(Path(location.path), self._ctx.working_dirs)

    def guarded(self, path: Path) -> bool:
        return self._guard is not None and not self._guard(os.fsencode(path))

    def _read(self, path: Path) -> list[str] | None:
        if not inside_any(path, self._ctx.working_dirs) or self.guarded(path):
            return None
        try:
            return split_lines(document_text(self._ctx, path))
        except StateError:
            return None

    def show(self, location: IntelLocation) -> str:
        where = self.where(location)
        if self.outside(location):
            return f"{where} (outside the working directories; reading it is a Read that may ask)"
        text = self.line(location)
        return f"{where}: {text}" if text else where
