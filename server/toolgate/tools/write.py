"""Write: create a file, or replace a file you have read, keeping its encoding and line-ending style."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.file_state import FileRecord
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.tool import DescribeContext, ToolInput, ToolTraits
from toolgate.text.encoding import Decoded, TextFormat, decoded_as_written, encode, encode_raw
from toolgate.text.preview import count_lines
from toolgate.tools._file_writer import Encoded, SingleFileWriter
from toolgate.tools._write import (
    FinalText,
    OnDisk,
    load_for_call,
    require_clean_in_editor,
    require_fresh,
    review_note,
)


class WriteInput(ToolInput):
    file_path: str = Field(description="Path of the file to write: absolute, or relative to the workspace.")
    content: str = Field(description="The complete new content of the file.")


@dataclass(frozen=True, slots=True)
class WriteDone:
    shown: str
    created: bool
    line_count: int
    notes: tuple[str, ...] = ()
    user_modified: bool = False
    user_changes: str = ""


@dataclass(frozen=True, slots=True)
class WritePlan:
    disk: OnDisk
    new_text: str  # the content as proposed for review: LF endings
    # Whether the content holds a carriage return: looked for once per plan, since every later question about
    # line endings (`encode`, `decoded_as_written`) starts with it, and each look is a pass over all of it.
    carriage_returns: bool


class WriteTool(SingleFileWriter[WriteInput, WritePlan, WriteDone]):
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

    def file_path(self, tool_input: WriteInput) -> str:
        return tool_input.file_path

    def summary(self, tool_input: WriteInput, workspace: Path) -> str:
        count = count_lines(tool_input.content)
        return f"{display_input_path(tool_input.file_path, workspace)} ({count} line{'' if count == 1 else 's'})"

    def plan(self, tool_input: WriteInput, path: Path, record: FileRecord | None, ctx: ToolContext) -> WritePlan:
        shown = display_path(path, ctx.workspace)
        disk = load_for_call(ctx, path, shown, record)
        if disk.exists:
            require_fresh(record, disk, shown)
            require_clean_in_editor(ctx, disk)
        content = tool_input.content
        carriage_returns = "\r" in content  # memchr speed, where a two-character search costs milliseconds on 5 MB
        return WritePlan(disk, content.replace("\r\n", "\n") if carriage_returns else content, carriage_returns)

    def encode(self, tool_input: WriteInput, plan: WritePlan, chosen: FinalText, shown: str) -> Encoded:
        # Unless the human changed it, the content is written exactly as sent (the proposal shows it with LF endings).
        if chosen.user_modified:
            content = chosen.text
            carriage_returns = "\r" in content
            final = content.replace("\r\n", "\n") if carriage_returns else content
        else:
            content, carriage_returns, final = tool_input.content, plan.carriage_returns, plan.new_text
        decoded = plan.disk.decoded
        if decoded is None:
            known_new = decoded_as_written(content, TextFormat(), carriage_returns=carriage_returns)
            return Encoded(encode_raw(content, TextFormat()), final, known_new)
        fmt = decoded.format
        notes: list[str] = []
        known: Decoded | None = None
        lf_only = not carriage_returns or "\r\n" not in content
        if lf_only and "\n" in content and (fmt.newline == "\r\n" or decoded.mixed_endings):
            data = encode(content, fmt, like=decoded)
            notes.append("The file's CRLF line endings were kept (your content used LF).")
        else:
            data = encode_raw(content, fmt)
            known = decoded_as_written(content, fmt, carriage_returns=carriage_returns)
        if fmt.encoding != "utf-8" or fmt.bom:
            notes.append(f"It is still {fmt.encoding}{' with a byte-order mark' if fmt.bom else ''}.")
        return Encoded(data, final, known, tuple(notes))

    def done(
        self, tool_input: WriteInput, plan: WritePlan, chosen: FinalText, encoded: Encoded, shown: str
    ) -> WriteDone:
        # The model is told the line count, not a diff: diffing 5 MB against 5 MB was a seventh of a big Write.
        return WriteDone(
            shown=shown,
            created=not plan.disk.exists,
            line_count=count_lines(encoded.text),
            notes=encoded.notes,
            user_modified=chosen.user_modified,
            user_changes=chosen.user_changes,
        )

    def to_result(self, data: WriteDone, ctx: ToolContext) -> str:
        verb = "Created" if data.created else "Updated"
        lines = f"{data.line_count} line{'s' if data.line_count != 1 else ''}"
        text = f"{verb} {data.shown} ({lines})." + "".join(f" {note}" for note in data.notes)
        if data.user_modified:
            text += review_note(data.user_changes)
        return text
