"""ToolOutputGrep: the lines of a stored result that match a pattern, with their line numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Tool, ToolInput
from toolgate.text.quotes import shown_quoted
from toolgate.text.ripgrep_output import split_records
from toolgate.tools._ripgrep import RIPGREP, explain_search_error
from toolgate.tools._search import join_notes

MAX_LINES = 200
MAX_CHARS = 30_000
MAX_LINE_CHARS = 500


class ToolOutputGrepInput(ToolInput):
    ref: str = Field(min_length=1, description='Reference of a stored result, such as "out-1a2b3c4d".')
    pattern: str = Field(min_length=1, description="Regular expression to look for (the same syntax as Grep).")
    context: int = Field(default=0, ge=0, le=100, description="Lines to show before and after each match.")
    ignore_case: bool = Field(default=False, alias="-i", description="Match letters regardless of case.")


@dataclass(frozen=True, slots=True)
class OutputMatches:
    ref: str
    pattern: str
    lines: list[str]  # "12:text" for a match, "11-text" for context, "--" between groups
    matching: int  # matching lines in the whole stored output
    total: int  # lines there were to show (matches and context)
    stopped: str | None


class ToolOutputGrepTool(Tool[ToolOutputGrepInput, OutputMatches]):
    name = "ToolOutputGrep"
    traits = LOOKS_ONLY
    input_model = ToolOutputGrepInput
    max_result_chars = None  # keeps to its own budget

    def description(self, ctx: DescribeContext) -> str:
        read = (
            " Then read around a line with ToolOutput (offset = that line)." if "ToolOutput" in ctx.tool_names else ""
        )
        return (
            'Search a stored tool result (one too long to show in full, given with a reference "out-…") for '
            "lines matching a regular expression. Matches come back as `N:text` with their line numbers, context "
            f"lines as `N-text`.{read}\n"
            f"- At most {MAX_LINES} lines come back; the result says how many matched in all. Lines longer than "
            f"{MAX_LINE_CHARS} characters are cut and marked."
        )

    def paths(self, tool_input: ToolOutputGrepInput, ctx: ToolContext) -> Sequence[Path]:
        return ()  # the session's own store, not the user's files

    def summary(self, tool_input: ToolOutputGrepInput, workspace: Path) -> str:
        return f"{shown_quoted(tool_input.pattern)} in {tool_input.ref}"

    async def validate(self, tool_input: ToolOutputGrepInput, ctx: ToolContext) -> None:
        ctx.get(OUTPUT_STORE).get(tool_input.ref)

    async def call(self, tool_input: ToolOutputGrepInput, ctx: ToolContext) -> OutputMatches:
        entry = ctx.get(OUTPUT_STORE).get(tool_input.ref)
        ripgrep = ctx.get(RIPGREP)
        args = [
            "--no-filename",
            "--line-number",
            "--color=never",
            "--text",  # stored output is text even when a command printed odd bytes
            f"--max-columns={MAX_LINE_CHARS}",
            "--max-columns-preview",
            f"--context={tool_input.context}",
        ]
        if tool_input.ignore_case:
            args.append("--ignore-case")
        run = await ripgrep.run([*args, "-e", tool_input.pattern, "--", str(entry.path)])
        if run.returncode == 2 and not run.stdout:
            raise await explain_search_error(run, tool_input.pattern, ripgrep)
        records = [r.decode("utf-8", errors="replace") for r in split_records(run.stdout, b"\n", partial=run.partial)]
        shown: list[str] = []
        used = 0
        for record in records:
            if len(shown) >= MAX_LINES or used + len(record) > MAX_CHARS:
                break
            shown.append(record)
            used += len(record) + 1
        if shown and shown[-1] == "--":
            shown.pop()
        counted = [r for r in records if r != "--"]
        return OutputMatches(
            ref=entry.ref,
            pattern=tool_input.pattern,
            lines=shown,
            matching=sum(1 for r in counted if _is_match(r)),
            total=len(counted),
            stopped=ripgrep.describe_stop(run.stopped) if run.stopped else None,
        )

    def to_result(self, data: OutputMatches, ctx: ToolContext) -> str:
        notes = []
        shown = sum(1 for line in data.lines if line != "--")
        if shown < data.total:
            notes.append(
                f"Showing the first {shown:,} of {data.total:,} lines ({data.matching:,} matching). "
                "Use a more specific pattern, or read a range with ToolOutput."
            )
        if data.stopped:
            notes.append(f"Incomplete: {data.stopped}.")
        if not data.lines:
            return join_notes(f"No line of {data.ref} matches {data.pattern!r}.", notes)
        return join_notes("\n".join(data.lines), notes)


def _is_match(record: str) -> bool:
    digits = len(record) - len(record.lstrip("0123456789"))
    return 0 < digits < len(record) and record[digits] == ":"
