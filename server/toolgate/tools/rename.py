"""Rename: the editor's rename provider computes the change across files; toolgate writes it as an edit of each.

The editor (its language server, reading the live buffers) answers with a WorkspaceEdit. Each file's edits are
applied here to the file as it is on disk, which is what will be written; a file with unsaved changes in the
editor is refused, since the provider computed its edits against the buffer, not the disk. From there Rename is
a file-writing tool like ApplyPatch: the ladder judges a write of every file (`paths`, Edit rules), the person
reviews one multi-file diff and may edit any file or put one back as it was, each file is checked right before
writing (unchanged since the rename was computed), and all files are written or none. The runner checkpoints it
like any call that changes files.

No prior Read is needed: the model does not write the text, the editor computes it from the current files. A
file the model had read stays known to it (its record is the renamed text); one it had not read stays unread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from pydantic import Field

from toolgate.core.code_intel import IntelQuery
from toolgate.core.context import ToolContext
from toolgate.core.deps import Dep
from toolgate.core.errors import StateError
from toolgate.core.file_state import FileRecord, ReadFileState
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.permission import FileProposal
from toolgate.core.tool import DescribeContext, Tool, ToolInput, ToolTraits
from toolgate.text.document_sync import Position
from toolgate.text.encoding import UnencodableError, encode
from toolgate.text.text_edits import OverlappingEdits, TextEdit, apply_text_edits
from toolgate.tools._code_intel import IntelInputError, ask_editor, place_symbol
from toolgate.tools._write import (
    OnDisk,
    Staged,
    discard,
    encoding_error,
    final_text,
    load,
    publish,
    put_back,
    require_clean_in_editor,
    review_note,
    reviewed_for,
    stage,
    verify_unchanged,
    written_record,
)


class RenameInput(ToolInput):
    file_path: str = Field(description="The file the symbol is in.")
    symbol: str = Field(description="The current name, exactly as written.")
    line_text: str = Field(description="The text of a line the symbol is on, copied from Read (no line number).")
    line: int | None = Field(
        default=None, ge=1, description="Its line number, to choose between lines that read alike."
    )
    occurrence: int | None = Field(default=None, ge=1, description="Which use on that line, counted from 1.")
    new_name: str = Field(description="The new name.")


@dataclass(frozen=True, slots=True)
class FilePlan:
    path: Path
    disk: OnDisk
    new_text: str
    edits: int


@dataclass(frozen=True, slots=True)
class FileDone:
    shown: str
    edits: int
    user_changes: str = ""  # a diff of what the person changed in the proposal; empty: written as proposed
    kept: bool = False  # the person put the file back as it was in the review: not written


@dataclass(frozen=True, slots=True)
class RenameDone:
    old: str
    new: str
    files: list[FileDone]
    # The files written. A post-write step (problems the change introduced) reads this, as it reads the path of
    # an Edit, Write or ApplyPatch.
    written: list[Path]


@dataclass(slots=True)
class _Planned:
    """The plan `validate` computed from the editor's answer, and the input it answers (one call's only)."""

    tool_input: RenameInput | None = None
    files: list[FilePlan] = field(default_factory=list)


_PLANNED: Dep[_Planned] = Dep("rename_planned", lambda _r: _Planned(), scope="call")


class RenameTool(Tool[RenameInput, RenameDone]):
    name = "Rename"
    traits = ToolTraits(open_world=False)
    input_model = RenameInput

    def __init__(self, languages: Callable[[], frozenset[str] | None] = lambda: None) -> None:
        self._languages = languages

    def description(self, ctx: DescribeContext) -> str:
        from toolgate.tools.lsp import languages_clause

        return (
            "Rename a symbol everywhere it is used, as the editor's language server understands the code (scopes, "
            "imports, other files), instead of editing each use by hand.\n"
            "- Give file_path, symbol, line_text (the line the symbol is on, copied from Read) and new_name; add "
            "line when several lines read alike, occurrence when the symbol is used twice on its line.\n"
            "- Every file it changes is a file edit: the user may review them together and change any of them. "
            "Files with unsaved changes in the editor are refused. No prior Read is needed.\n"
            "- The result lists the files and the number of changes in each."
            f"{languages_clause(self._languages())}"
        )

    def paths(self, tool_input: RenameInput, ctx: ToolContext) -> Sequence[Path]:
        # Known once `validate` has asked the editor; before that the call names only the file it starts from.
        planned = ctx.get(_PLANNED)
        if planned.tool_input != tool_input:
            return [ctx.resolve_path(tool_input.file_path)]
        return [plan.path for plan in planned.files]

    def summary(self, tool_input: RenameInput, workspace: Path) -> str:
        where = display_input_path(tool_input.file_path, workspace)
        return f"{tool_input.symbol} → {tool_input.new_name} (from {where})"

    async def validate(self, tool_input: RenameInput, ctx: ToolContext) -> None:
        if not tool_input.new_name.strip() or tool_input.new_name != tool_input.new_name.strip():
            raise IntelInputError("new_name must be the new name itself: not empty, no surrounding whitespace.")
        if tool_input.new_name == tool_input.symbol:
            raise IntelInputError("new_name is the current name, so there is nothing to rename.")
        path = ctx.resolve_path(tool_input.file_path)
        position = await anyio.to_thread.run_sync(
            place_symbol, ctx, path, tool_input.symbol, tool_input.line_text, tool_input.line, tool_input.occurrence
        )
        query = IntelQuery(
            operation="rename",
            path=str(path),
            line=position.line,
            character=position.character,
            new_name=tool_input.new_name,
        )
        answer = await ask_editor(ctx, query, f"renaming {tool_input.symbol}")
        by_file: dict[Path, list[TextEdit]] = {}
        for file in answer.edits:
            by_file.setdefault(Path(file.path), []).extend(
                TextEdit(
                    Position(e.span.start_line, e.span.start_character),
                    Position(e.span.end_line, e.span.end_character),
                    e.new_text,
                )
                for e in file.edits
            )
        if not any(by_file.values()):
            raise StateError(
                f"The editor found nothing to rename for {tool_input.symbol} at that place. Check with LSP "
                "findReferences that the symbol is the one you mean."
            )
        files = await anyio.to_thread.run_sync(_plan_files, by_file, ctx)
        if not files:
            raise StateError(f"Renaming {tool_input.symbol} to {tool_input.new_name} would change no file.")
        planned = ctx.get(_PLANNED)
        planned.tool_input, planned.files = tool_input, files

    async def _plan_for(self, tool_input: RenameInput, ctx: ToolContext) -> list[FilePlan]:
        """The plan for this very input: a hook that changed the input (PreToolUse) makes `validate` plan again."""
        if ctx.get(_PLANNED).tool_input != tool_input:
            await self.validate(tool_input, ctx)
        return ctx.get(_PLANNED).files

    async def propose(self, tool_input: RenameInput, ctx: ToolContext) -> list[FileProposal] | None:
        planned = await self._plan_for(tool_input, ctx)
        return [FileProposal(path=str(p.path), original=p.disk.text, proposed=p.new_text) for p in planned]

    async def call(self, tool_input: RenameInput, ctx: ToolContext) -> RenameDone:
        planned = await self._plan_for(tool_input, ctx)
        files, written = await anyio.to_thread.run_sync(_write_all, planned, ctx)
        ctx.commit(lambda session: _remember(session.file_state, written))
        return RenameDone(tool_input.symbol, tool_input.new_name, files, list(written))

    def to_result(self, data: RenameDone, ctx: ToolContext) -> str:
        changed = [f for f in data.files if not f.kept]
        total = sum(f.edits for f in changed)
        lines = [
            f"Renamed {data.old} to {data.new}: {total} change{'s' if total != 1 else ''} in {len(changed)} "
            f"file{'s' if len(changed) != 1 else ''}."
        ]
        lines += [f"{f.shown} ({f.edits})" for f in changed]
        kept = [f.shown for f in data.files if f.kept]
        if kept:
            lines.append(f"The user kept these files as they were (not renamed there): {', '.join(kept)}.")
        notes = "".join(review_note(f.user_changes) for f in changed if f.user_changes)
        return "\n".join(lines) + notes


def _remember(file_state: ReadFileState, written: dict[Path, FileRecord]) -> None:
    """A file the model had read is known to it as renamed; one it had not read stays unread."""
    for path, record in written.items():
        if file_state.get(path) is not None:
            file_state.set(path, record)


def _plan_files(by_file: dict[Path, list[TextEdit]], ctx: ToolContext) -> list[FilePlan]:
    plans: list[FilePlan] = []
    for path, edits in by_file.items():
        if not edits:
            continue
        shown = display_path(path, ctx.workspace)
        disk = load(path, shown, ctx)
        if not disk.exists:
            raise StateError(f"The editor's rename changes {shown}, which does not exist on disk; nothing was changed.")
        require_clean_in_editor(ctx, disk)
        try:
            new_text = apply_text_edits(disk.text, edits)
        except OverlappingEdits as exc:
            raise StateError(
                f"The editor's rename for {shown} cannot be applied: {exc}. Nothing was changed."
            ) from None
        if new_text != disk.text:
            plans.append(FilePlan(path, disk, new_text, len(edits)))
    return plans


def _write_all(planned: list[FilePlan], ctx: ToolContext) -> tuple[list[FileDone], dict[Path, FileRecord]]:
    """Check every file again and write them all, or none. No await anywhere in here."""
    files: list[FileDone] = []
    to_write: list[tuple[FilePlan, bytes, str]] = []
    for plan in planned:
        shown = display_path(plan.path, ctx.workspace)
        now = load(plan.path, shown, ctx)
        if now.text != plan.disk.text:
            raise StateError(
                f"{shown} changed after the rename was computed, so nothing was changed. Call Rename again."
            )
        require_clean_in_editor(ctx, now)
        reviewed = reviewed_for(ctx, plan.path)
        if reviewed is not None and (
            reviewed.content is None or reviewed.content.replace("\r\n", "\n") == plan.disk.text
        ):
            files.append(FileDone(shown, plan.edits, kept=True))  # the person put it back as it was
            continue
        chosen = final_text(ctx, plan.path, plan.new_text, shown)
        assert now.decoded is not None  # `load` decodes every file that exists
        try:
            data = encode(chosen.text, now.decoded.format, like=now.decoded)
        except UnencodableError as exc:
            raise encoding_error(shown, exc) from None
        to_write.append((FilePlan(plan.path, now, chosen.text, plan.edits), data, chosen.text))
        files.append(FileDone(shown, plan.edits, chosen.user_changes))
    staged: list[tuple[FilePlan, Staged, str]] = []
    try:
        for plan, data, text in to_write:
            staged.append(
                (
                    plan,
                    stage(
                        plan.disk.target, data, plan.disk.stat, display_path(plan.path, ctx.workspace), ctx.workspace
                    ),
                    text,
                )
            )
        for _, item, _ in staged:
            verify_unchanged(item)
    except BaseException:
        for _, item, _ in staged:
            discard(item)
        raise
    written: dict[Path, FileRecord] = {}
    for index, (plan, item, text) in enumerate(staged):
        try:
            written[plan.path] = written_record(text, publish(item))
        except OSError as exc:
            _put_back([p for p, _, _ in staged[:index]])
            for _, rest, _ in staged[index:]:
                discard(rest)
            raise StateError(
                f"Writing the rename failed part-way ({exc.strerror or exc}); the files already written were put "
                "back, so nothing was changed."
            ) from None
    return files, written


def _put_back(plans: list[FilePlan]) -> None:
    """Best effort: the bytes each file had before the rename."""
    for plan in plans:
        put_back(plan.disk)
