"""ApplyPatch: the `*** Begin Patch` format, applied all-or-nothing.

Every file's new content is computed first; only when every hunk fits and every existing file it touches
has been Read and is unchanged is anything written. The writes themselves are staged (temp files beside
their targets), checked once more, then renamed into place; a failure while renaming restores the files
already replaced. On any failure nothing on disk changes and the error names the file and the hunk.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio
from pydantic import Field

from toolgate.core.atomic_file import remove_file_beneath
from toolgate.core.context import ToolContext
from toolgate.core.errors import ErrorKind, StateError, ToolError
from toolgate.core.file_state import FileRecord, ReadFileState
from toolgate.core.paths import display_path
from toolgate.core.permission import FileProposal
from toolgate.core.tool import DescribeContext, Tool, ToolInput, ToolTraits
from toolgate.text.encoding import TextFormat, UnencodableError, decode_raw, encode_raw, restore_line_endings
from toolgate.text.patch_format import (
    AddFile,
    DeleteFile,
    FileOp,
    HunkNotFound,
    PatchSyntaxError,
    UpdateFile,
    apply_chunks,
    parse_patch,
)
from toolgate.text.review_outcome import describe_review, describe_skipped
from toolgate.tools._write import (
    OnDisk,
    Staged,
    discard,
    encoding_error,
    load,
    publish,
    put_back,
    require_clean_in_editor,
    require_fresh,
    require_unchanged,
    review_note,
    reviewed_for,
    stage,
    verify_unchanged,
    written_record,
)


class PatchInputError(ToolError):
    kind = ErrorKind.INVALID_INPUT


class ApplyPatchInput(ToolInput):
    patch: str = Field(description="The whole patch, from '*** Begin Patch' to '*** End Patch'.")


@dataclass(slots=True)
class _Slot:
    """One path the patch touches: what is on disk, and what it will be."""

    disk: OnDisk
    raw: str | None  # the decoded text with its own line endings; None: absent
    fmt: TextFormat
    final: str | None = None  # None: absent after the patch
    touched: bool = False
    moved_from: Path | None = None  # the patch moves that file here (and deletes it there)


@dataclass(frozen=True, slots=True)
class Change:
    letter: Literal["A", "M", "D"]
    shown: str
    moved_from: str | None = None
    copied_from: str | None = None  # a move whose original the person kept


@dataclass(frozen=True, slots=True)
class PatchDone:
    changes: list[Change]
    originals: dict[str, str | None]  # by absolute path: the text before (None: did not exist)
    user_notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Plan:
    slots: dict[Path, _Slot]
    changes: list[Change]


class ApplyPatchTool(Tool[ApplyPatchInput, PatchDone]):
    name = "ApplyPatch"
    traits = ToolTraits(open_world=False)
    input_model = ApplyPatchInput

    def description(self, ctx: DescribeContext) -> str:
        return (
            "Change several files in one step with a patch in this format:\n"
            "*** Begin Patch\n"
            "*** Add File: path/new.py\n+every line of the new file, each prefixed with +\n"
            "*** Update File: path/old.py\n*** Move to: path/renamed.py   (optional)\n"
            "@@ def function_or_class_line():   (optional: a line above the change, to place it)\n"
            " context line (a space, then the line as it is)\n-removed line\n+added line\n"
            "*** Delete File: path/obsolete.py\n"
            "*** End Patch\n"
            "- Paths are relative to the workspace. Give about 3 lines of context around each change.\n"
            "- Every file the patch updates, moves, deletes or overwrites must have been Read in this session "
            "and be unchanged since; new files need no Read.\n"
            "- All or nothing: if any hunk does not fit, no file is changed and the error names the file and hunk."
        )

    def paths(self, tool_input: ApplyPatchInput, ctx: ToolContext) -> Sequence[Path]:
        try:
            ops = parse_patch(tool_input.patch)
        except PatchSyntaxError:
            return []
        found: list[Path] = []
        for op in ops:
            found.append(ctx.resolve_path(op.path))
            if isinstance(op, UpdateFile) and op.move_path:
                found.append(ctx.resolve_path(op.move_path))
        return list(dict.fromkeys(found))

    def moved_from(self, tool_input: ApplyPatchInput, ctx: ToolContext) -> Mapping[Path, Path]:
        try:
            ops = parse_patch(tool_input.patch)
        except PatchSyntaxError:
            return {}
        moves = (
            (ctx.resolve_path(op.move_path), ctx.resolve_path(op.path))
            for op in ops
            if isinstance(op, UpdateFile) and op.move_path
        )
        return {new: old for new, old in moves if new != old}

    def summary(self, tool_input: ApplyPatchInput, workspace: Path) -> str:
        try:
            ops = parse_patch(tool_input.patch)
        except PatchSyntaxError:
            return "(a patch that does not parse)"
        return ", ".join(op.path for op in ops)

    async def validate(self, tool_input: ApplyPatchInput, ctx: ToolContext) -> None:
        ops = _parse(tool_input.patch)
        records = _records(ops, ctx)
        await anyio.to_thread.run_sync(_plan, ops, records, ctx)

    async def propose(self, tool_input: ApplyPatchInput, ctx: ToolContext) -> list[FileProposal] | None:
        try:
            ops = _parse(tool_input.patch)
            plan = await anyio.to_thread.run_sync(_plan, ops, _records(ops, ctx), ctx)
        except ToolError:
            return None
        return [
            FileProposal(
                path=str(path), original=slot.disk.text if slot.disk.exists else None, proposed=_lf(slot.final)
            )
            for path, slot in plan.slots.items()
            if slot.touched
        ]

    async def call(self, tool_input: ApplyPatchInput, ctx: ToolContext) -> PatchDone:
        ops = _parse(tool_input.patch)
        records = _records(ops, ctx)
        done, written = await anyio.to_thread.run_sync(_apply, ops, records, ctx)
        ctx.commit(lambda session: _record_writes(session.file_state, written))
        return done

    def to_result(self, data: PatchDone, ctx: ToolContext) -> str:
        if not data.changes:  # the person left every file out while accepting the review
            return "Nothing was applied: the user left every file of the patch as it was." + "".join(data.user_notes)
        lines = [f"Applied the patch ({len(data.changes)} file{'s' if len(data.changes) != 1 else ''}):"]
        for change in data.changes:
            moved = f" (moved from {change.moved_from})" if change.moved_from else ""
            copied = f" (a copy of {change.copied_from}, which was kept)" if change.copied_from else ""
            lines.append(f"{change.letter} {change.shown}{moved}{copied}")
        return "\n".join(lines) + "".join(data.user_notes)


def _record_writes(file_state: ReadFileState, written: dict[Path, FileRecord | None]) -> None:
    for path, record in written.items():
        if record is None:
            file_state.forget(path)
        else:
            file_state.set(path, record)


def _lf(text: str | None) -> str | None:
    return None if text is None else text.replace("\r\n", "\n")


def _parse(patch: str) -> list[FileOp]:
    try:
        ops = parse_patch(patch)
    except PatchSyntaxError as exc:
        raise PatchInputError(f"The patch could not be parsed ({exc}). Nothing was changed. Fix the patch.") from None
    if not ops:
        raise PatchInputError("The patch has no file sections, so nothing was changed.")
    return ops


def _records(ops: list[FileOp], ctx: ToolContext) -> dict[Path, FileRecord | None]:
    """readFileState for every path the patch names, fetched on the event loop before any thread runs."""
    records: dict[Path, FileRecord | None] = {}
    for op in ops:
        for raw in (op.path, op.move_path if isinstance(op, UpdateFile) else None):
            if raw:
                path = ctx.resolve_path(raw)
                records[path] = ctx.file_state.get(path)
    return records


def _plan(ops: list[FileOp], records: dict[Path, FileRecord | None], ctx: ToolContext) -> _Plan:
    """Compute every file's final text; every check happens here, and nothing is written."""
    slots: dict[Path, _Slot] = {}
    changes: list[Change] = []

    def shown(path: Path) -> str:
        return display_path(path, ctx.workspace)

    def slot(path: Path) -> _Slot:
        if path not in slots:
            disk = load(path, shown(path), ctx)
            if disk.exists:
                require_fresh(records.get(path), disk, shown(path))
                require_clean_in_editor(ctx, disk)
                raw, fmt = decode_raw(disk.data)
                slots[path] = _Slot(disk, raw, fmt, final=raw)
            else:
                slots[path] = _Slot(disk, None, TextFormat())
        return slots[path]

    for op in ops:
        path = ctx.resolve_path(op.path)
        where = f"{shown(path)} (patch line {op.line})"
        try:
            current = slot(path)
        except StateError as exc:
            raise StateError(f"The patch was not applied; nothing was changed. {where}: {exc.message}") from None
        if isinstance(op, AddFile):
            current.final, current.touched = op.contents, True
            changes.append(Change("A", shown(path)))
            continue
        if current.final is None:
            verb = "delete" if isinstance(op, DeleteFile) else "update"
            raise StateError(
                f"The patch was not applied; nothing was changed. {where}: there is no file to {verb} at that path."
            )
        if isinstance(op, DeleteFile):
            current.final, current.touched = None, True
            changes.append(Change("D", shown(path)))
            continue
        try:
            new_text = apply_chunks(current.final, op.chunks)
        except HunkNotFound as exc:
            chunk = op.chunks[exc.hunk - 1]
            raise StateError(
                f"The patch was not applied; nothing was changed. {shown(path)}, hunk {exc.hunk} of "
                f"{len(op.chunks)} (patch line {chunk.line}): {exc.message}\nRead the file and make the hunk's "
                "context and '-' lines match it exactly."
            ) from None
        if op.move_path and ctx.resolve_path(op.move_path) != path:
            destination = ctx.resolve_path(op.move_path)
            try:
                target = slot(destination)
            except StateError as exc:
                raise StateError(
                    f"The patch was not applied; nothing was changed. {shown(destination)} (move target): {exc.message}"
                ) from None
            target.final, target.touched, target.moved_from = new_text, True, path
            if not target.disk.exists:
                target.fmt = current.fmt  # the moved file keeps its encoding
            current.final, current.touched = None, True
            changes.append(Change("M", shown(destination), moved_from=shown(path)))
        else:
            current.final, current.touched = new_text, True
            changes.append(Change("M", shown(path)))
    return _Plan(slots, changes)


def _apply(
    ops: list[FileOp], records: dict[Path, FileRecord | None], ctx: ToolContext
) -> tuple[PatchDone, dict[Path, FileRecord | None]]:
    """Plan again (the final check), then write every file or none. No await anywhere in here."""
    plan = _plan(ops, records, ctx)
    notes: list[str] = []
    skipped: set[str] = set()
    to_write: list[tuple[Path, _Slot, bytes, str]] = []
    to_delete: list[tuple[Path, _Slot]] = []
    for path, slot in plan.slots.items():
        if not slot.touched:
            continue
        shown = display_path(path, ctx.workspace)
        final = slot.final
        reviewed = reviewed_for(ctx, path)
        if reviewed is not None:
            if reviewed.proposed != _lf(final):
                raise StateError(
                    f"{shown} changed on disk while the patch was being reviewed, so nothing was changed. Read it "
                    "again and make a new patch."
                )
            if reviewed.skipped:
                _require_source_kept(ctx, slot, shown)
                skipped.add(shown)
                notes.append(f"\n{describe_skipped(reviewed.original, _lf(slot.final), shown)}")
                continue
            if reviewed.user_modified and reviewed.content is not None:
                base = final if final is not None else ""
                final = restore_line_endings(base, reviewed.content.replace("\r\n", "\n"), slot.fmt.newline)
                described = describe_review(reviewed.original, _lf(slot.final), reviewed.content, shown)
                notes.append(review_note(described))
            elif reviewed.user_modified:
                final = None
                notes.append(f"\nThe user chose to delete {shown} instead of changing it.")
        if final is None:
            if slot.disk.exists:
                to_delete.append((path, slot))
            continue
        try:
            to_write.append((path, slot, encode_raw(final, slot.fmt), final))
        except UnencodableError as exc:
            raise encoding_error(shown, exc) from None

    staged: list[tuple[Path, Staged, str]] = []
    try:
        for path, slot, data, final in to_write:
            staged.append(
                (
                    path,
                    stage(slot.disk.target, data, slot.disk.stat, display_path(path, ctx.workspace), ctx.workspace),
                    final,
                )
            )
        for _, item, _ in staged:
            verify_unchanged(item)
        for path, slot in to_delete:
            require_unchanged(slot.disk.target, slot.disk.stat, display_path(path, ctx.workspace))
    except BaseException:
        for _, item, _ in staged:
            discard(item)
        raise

    written: dict[Path, FileRecord | None] = {}
    published: list[Path] = []
    deleted: list[Path] = []
    try:
        for path, item, final in staged:
            st = publish(item)
            published.append(path)
            written[path] = written_record(final.replace("\r\n", "\n"), st)
        for path, slot in to_delete:
            # Beneath `/` along the real path the decision saw (`OnDisk.target`): a folder swapped for a link
            # since then is not followed out (NotAFolder, an OSError: what was written is put back).
            remove_file_beneath(Path("/"), os.fsencode(slot.disk.target).lstrip(b"/"))
            deleted.append(path)
            written[path] = None
    except OSError as exc:
        _roll_back(plan, published + deleted)
        for _, item, _ in staged[len(published) :]:
            discard(item)
        raise StateError(
            f"Writing the patch failed part-way ({exc.strerror or exc}); the files already changed were put back, "
            "so nothing was changed."
        ) from None
    originals = {str(path): (slot.disk.text if slot.disk.exists else None) for path, slot in plan.slots.items()}
    changes = [_as_done(change, skipped) for change in plan.changes if change.shown not in skipped]
    return PatchDone(changes, originals, notes), written


def _as_done(change: Change, skipped: set[str]) -> Change:
    """A move whose deletion of the original the person rejected made a copy: it is told as one."""
    if change.moved_from is not None and change.moved_from in skipped:
        return Change("A", change.shown, copied_from=change.moved_from)
    return change


def _require_source_kept(ctx: ToolContext, slot: _Slot, shown: str) -> None:
    """A move's target left out while its source is still deleted would lose the file: refused, nothing changes."""
    source = slot.moved_from
    kept = reviewed_for(ctx, source) if source is not None else None
    if source is not None and (kept is None or not kept.skipped):
        raise StateError(
            f"The review left out {shown}, where the patch moves {display_path(source, ctx.workspace)} to, but not "
            "the move's deletion of the original: that would lose the file, so nothing was changed. Ask the user "
            "whether to move it, and patch again."
        )


def _roll_back(plan: _Plan, changed: list[Path]) -> None:
    """Best effort: put back the bytes of every file already replaced or deleted."""
    for path in changed:
        put_back(plan.slots[path].disk)
