"""Write: create a file, or replace a file you have read, keeping its encoding and line-ending style."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.errors import ToolError
from toolgate.core.file_state import FileRecord
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.permission import FileProposal
from toolgate.core.tool import DescribeContext, Tool, ToolInput, ToolTraits
from toolgate.text.diff import Hunk, structured_patch_counted
from toolgate.text.encoding import Decoded, TextFormat, UnencodableError, decoded_as_written, encode, encode_raw
from toolgate.text.preview import count_lines
from toolgate.tools._write import (
    OnDisk,
    atomic_write,
    encoding_error,
    final_text,
    load_for_call,
    require_clean_in_editor,
    require_fresh,
    review_note,
    written_record,
)


class WriteInput(ToolInput):
    file_path: str = Field(description="Path of the file to write: absolute, or relative to the workspace.")
    content: str = Field(description="The complete new content of the file.")


@dataclass(frozen=True, slots=True)
class WriteDone:
    shown: str
    created: bool
    line_count: int
    patch: list[Hunk]
    original: str | None
    notes: tuple[str, ...] = ()
    user_modified: bool = False
    user_changes: str = ""


class WriteTool(Tool[WriteInput, WriteDone]):
    name = "Write"
    traits = ToolTraits(idempotent=True, open_world=False)
    input_model = WriteInput

    def description(self, ctx: DescribeContext) -> str:
        prefer = (
            " Prefer Edit for changing part of an existing file: it sends only the change."
            if ("Edit" in ctx.tool_names)
            else ""
        )
        return (
            "Write a file with the given content, creating it (and missing directories) or replacing it.\n"
            "- To replace an existing file, Read it first in this session; a file that changed since you "
            "read it is refused.\n"
            "- An existing file keeps its encoding and, when your content uses plain LF, its CRLF line endings."
            f"{prefer}"
        )

    def paths(self, tool_input: WriteInput, ctx: ToolContext) -> Sequence[Path]:
        return [ctx.resolve_path(tool_input.file_path)]

    def summary(self, tool_input: WriteInput, workspace: Path) -> str:
        count = count_lines(tool_input.content)
        return f"{display_input_path(tool_input.file_path, workspace)} ({count} line{'' if count == 1 else 's'})"

    async def validate(self, tool_input: WriteInput, ctx: ToolContext) -> None:
        path = ctx.resolve_path(tool_input.file_path)
        await anyio.to_thread.run_sync(_check, path, ctx.file_state.get(path), ctx)

    async def propose(self, tool_input: WriteInput, ctx: ToolContext) -> list[FileProposal] | None:
        path = ctx.resolve_path(tool_input.file_path)
        try:
            disk = await anyio.to_thread.run_sync(_check, path, ctx.file_state.get(path), ctx)
        except ToolError:
            return None
        original = disk.text if disk.exists else None
        return [FileProposal(path=str(path), original=original, proposed=_proposed(tool_input))]

    async def call(self, tool_input: WriteInput, ctx: ToolContext) -> WriteDone:
        path = ctx.resolve_path(tool_input.file_path)
        record = ctx.file_state.get(path)
        done, final, st, known = await anyio.to_thread.run_sync(_apply, tool_input, path, record, ctx)
        ctx.commit(lambda s: s.file_state.set(path, written_record(final, st, known)))
        return done

    def to_result(self, data: WriteDone, ctx: ToolContext) -> str:
        verb = "Created" if data.created else "Updated"
        lines = f"{data.line_count} line{'s' if data.line_count != 1 else ''}"
        text = f"{verb} {data.shown} ({lines})." + "".join(f" {note}" for note in data.notes)
        if data.user_modified:
            text += review_note(data.user_changes)
        return text


def _proposed(tool_input: WriteInput) -> str:
    """What the diff review shows, and what a reviewed version is checked against: the content with LF endings."""
    content = tool_input.content
    return content.replace("\r\n", "\n") if "\r" in content else content


def _check(path: Path, record: FileRecord | None, ctx: ToolContext) -> OnDisk:
    shown = display_path(path, ctx.workspace)
    disk = load_for_call(ctx, path, shown, record)
    if disk.exists:
        require_fresh(record, disk, shown)
        require_clean_in_editor(ctx, disk)
    return disk


def _apply(
    tool_input: WriteInput, path: Path, record: FileRecord | None, ctx: ToolContext
) -> tuple[WriteDone, str, os.stat_result, Decoded | None]:
    """The final check and the write, with no await between them. Also returns what reading the file back
    would give, when that is certain (for the record the write leaves)."""
    shown = display_path(path, ctx.workspace)
    disk = _check(path, record, ctx)
    chosen = final_text(ctx, path, _proposed(tool_input), shown)
    # Unless the human changed it, the content is written exactly as sent (the proposal shows it with LF endings).
    content = chosen.text if chosen.user_modified else tool_input.content
    notes: list[str] = []
    known: Decoded | None = None
    try:
        if disk.decoded is None:
            data = encode_raw(content, TextFormat())
            known = decoded_as_written(content, TextFormat())
        else:
            fmt = disk.decoded.format
            # `"\r" not in` first: one memchr-speed scan, where a two-character search costs milliseconds on 5 MB.
            lf_only = "\r" not in content or "\r\n" not in content
            if lf_only and "\n" in content and (fmt.newline == "\r\n" or disk.decoded.mixed_endings):
                data = encode(content, fmt, like=disk.decoded)
                notes.append("The file's CRLF line endings were kept (your content used LF).")
            else:
                data = encode_raw(content, fmt)
                known = decoded_as_written(content, fmt)
            if fmt.encoding != "utf-8" or fmt.bom:
                notes.append(f"It is still {fmt.encoding}{' with a byte-order mark' if fmt.bom else ''}.")
    except UnencodableError as exc:
        raise encoding_error(shown, exc) from None
    st = atomic_write(disk.target, data, disk.stat, shown)
    final = content.replace("\r\n", "\n") if "\r" in content else content
    original = disk.text if disk.exists else None
    patch, line_count = structured_patch_counted(original, final) if original is not None else ([], count_lines(final))
    done = WriteDone(
        shown=shown,
        created=not disk.exists,
        line_count=line_count,
        patch=patch,
        original=original,
        notes=tuple(notes),
        user_modified=chosen.user_modified,
        user_changes=chosen.user_changes,
    )
    return done, final, st, known
