"""ToolOutput: read back part of a result that was too long to show, by its reference, as numbered lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Tool, ToolInput
from toolgate.text.lines import number_lines
from toolgate.tools._search import join_notes

DEFAULT_LIMIT = 500
MAX_CHARS = 40_000  # per call: about 10k tokens, well under any result cap


class ToolOutputInput(ToolInput):
    ref: str = Field(min_length=1, description='Reference of a stored result, such as "out-1a2b3c4d".')
    offset: int | None = Field(default=None, ge=0, description="1-based line to start at. Omit to start at line 1.")
    limit: int | None = Field(
        default=None, ge=1, description=f"How many lines to read (default {DEFAULT_LIMIT}, fewer if they are long)."
    )


@dataclass(frozen=True, slots=True)
class OutputSlice:
    ref: str
    first: int
    lines: list[str]
    total_lines: int
    cut_line_chars: int  # when the last line shown was cut to fit: its full length, else 0


class ToolOutputTool(Tool[ToolOutputInput, OutputSlice]):
    name = "ToolOutput"
    traits = LOOKS_ONLY
    input_model = ToolOutputInput
    max_result_chars = None  # it keeps to its own budget; storing its result again would go in circles

    def description(self, ctx: DescribeContext) -> str:
        grep = " To find lines in it first, use ToolOutputGrep." if "ToolOutputGrep" in ctx.tool_names else ""
        return (
            "Read a stored tool result: one that was too long to show in full and came with a reference "
            f'("out-…"). Lines come back numbered as `N<TAB>text`, starting at 1.{grep}\n'
            f"- Reads {DEFAULT_LIMIT} lines from offset by default, and at most {MAX_CHARS:,} characters per call; "
            "the result says where to continue.\n"
            "- A session keeps only its most recent stored results; an old reference may have expired."
        )

    def paths(self, tool_input: ToolOutputInput, ctx: ToolContext) -> Sequence[Path]:
        return ()  # the session's own store, not the user's files

    def summary(self, tool_input: ToolOutputInput, workspace: Path) -> str:
        return f"{tool_input.ref} from line {max(tool_input.offset or 1, 1)}"

    async def validate(self, tool_input: ToolOutputInput, ctx: ToolContext) -> None:
        ctx.get(OUTPUT_STORE).get(tool_input.ref)  # unknown or expired: a StateError that says which

    async def call(self, tool_input: ToolOutputInput, ctx: ToolContext) -> OutputSlice:
        entry = ctx.get(OUTPUT_STORE).get(tool_input.ref)
        first = max(tool_input.offset or 1, 1)
        limit = tool_input.limit or DEFAULT_LIMIT
        lines, total, cut = await anyio.to_thread.run_sync(_read_range, entry.path, first, limit)
        return OutputSlice(entry.ref, first, lines, total, cut)

    def to_result(self, data: OutputSlice, ctx: ToolContext) -> str:
        if data.first > data.total_lines:
            return (
                f"(The stored output {data.ref} has {data.total_lines:,} lines, so there is nothing at line "
                f"{data.first:,}. Use an offset from 1 to {data.total_lines}.)"
            )
        last = data.first + len(data.lines) - 1
        notes = []
        if data.cut_line_chars:
            notes.append(
                f"Line {last:,} is {data.cut_line_chars:,} characters long; only its first {len(data.lines[-1]):,} "
                "are shown."
            )
        if last < data.total_lines:
            notes.append(f"Lines {data.first:,}–{last:,} of {data.total_lines:,}; continue with offset {last + 1}.")
        return join_notes(number_lines(data.lines, data.first), notes)


def _read_range(path: Path, first: int, limit: int) -> tuple[list[str], int, int]:
    """Lines `first`.. (at most `limit`, within MAX_CHARS) split on LF only, the total, and a cut line's length."""
    total = 0
    last_byte = b"\n"
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            total += chunk.count(b"\n")
            last_byte = chunk[-1:]
        if last_byte != b"\n":
            total += 1  # a last line without a newline still counts
        handle.seek(0)
        lines: list[str] = []
        used = 0
        for number, raw in enumerate(handle, start=1):
            if number < first:
                continue
            if len(lines) >= limit:
                break
            text = (raw[:-1] if raw.endswith(b"\n") else raw).decode("utf-8", errors="replace")
            room = MAX_CHARS - used
            if len(text) > room:
                if lines:
                    break  # the next call starts with this line
                lines.append(text[:room])
                return lines, total, len(text)
            lines.append(text)
            used += len(text) + 1
    return lines, total, 0
