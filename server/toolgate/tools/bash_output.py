"""BashOutput: what a background command printed since the last read, with its status and exit code."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.tool import DescribeContext, Tool, ToolInput, ToolTraits
from toolgate.shell.host import SHELL_HOST, Status
from toolgate.shell.output import HEAD_CHARS, INLINE_LIMIT, TAIL_CHARS, omission_notice
from toolgate.text.quotes import shown_quoted


class BashOutputInput(ToolInput):
    id: str = Field(description="The id Bash gave when it started the background command (such as bash_1).")
    filter: str | None = Field(
        default=None,
        description="A regular expression: only new lines that match it are returned. The other new lines "
        "are skipped and will not be returned later.",
    )


@dataclass(frozen=True, slots=True)
class BackgroundReport:
    id: str
    command: str
    status: Status
    exit_code: int | None
    elapsed_s: float
    text: str
    new_lines: int
    shown_lines: int
    filtered: bool
    stored_ref: str | None  # the complete output, once the command has finished
    chunk_ref: str | None  # this read's new output, when it was too long to show
    notes: tuple[str, ...] = ()  # what the sandbox refused it since the last read


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise StateError(
            f"The filter {pattern!r} is not a valid regular expression ({exc}). Fix it, or leave filter out."
        ) from None


class BashOutputTool(Tool[BashOutputInput, BackgroundReport]):
    name = "BashOutput"
    # Not idempotent: each call hands over the output that arrived since the last one.
    traits = ToolTraits(read_only=True, concurrency_safe=True, destructive=False, open_world=False)
    input_model = BashOutputInput
    max_result_chars = None  # it shortens long output itself

    def description(self, ctx: DescribeContext) -> str:
        return (
            "Read the new output of a command started with Bash run_in_background: everything it printed "
            "since your last read, then its status (running, completed, failed or stopped) and exit code.\n"
            "- filter keeps only the new lines matching a regular expression; the rest are skipped for good.\n"
            f"- New output over {INLINE_LIMIT:,} characters is shortened to its start and end, and kept whole "
            "by reference."
        )

    def summary(self, tool_input: BashOutputInput, workspace: Path) -> str:
        matching = f" matching {shown_quoted(tool_input.filter)}" if tool_input.filter else ""
        return f"Output of {tool_input.id}{matching}"

    async def validate(self, tool_input: BashOutputInput, ctx: ToolContext) -> None:
        ctx.get(SHELL_HOST).get(tool_input.id)
        if tool_input.filter is not None:
            _compile(tool_input.filter)

    async def call(self, tool_input: BashOutputInput, ctx: ToolContext) -> BackgroundReport:
        host = ctx.get(SHELL_HOST)
        task = host.get(tool_input.id)
        status = task.poll()  # before reading: output written before it finished is then all in the file
        text, _ = task.read_new()
        lines = text.splitlines()
        shown = lines
        if tool_input.filter is not None:
            pattern = _compile(tool_input.filter)
            shown = [line for line in lines if pattern.search(line)]
            text = "\n".join(shown)
        source = f"BashOutput {task.id}"
        chunk_ref = None
        if len(text) > INLINE_LIMIT:
            stored = ctx.get(OUTPUT_STORE).put(text, source=source)
            chunk_ref = stored.ref
            omitted = len(text) - HEAD_CHARS - TAIL_CHARS
            notice = omission_notice(omitted, len(text), stored.ref, len(text))
            text = f"{text[:HEAD_CHARS]}\n\n{notice}\n\n{text[-TAIL_CHARS:]}"
        host.adopt_output(task, source=f"Bash background {task.id}")
        note = task.notes() if task.notes is not None else None
        end = task.finished_at or time.monotonic()
        return BackgroundReport(
            id=task.id,
            command=task.command,
            status=status,
            exit_code=task.exit_code if status != "running" else None,
            elapsed_s=end - task.started,
            text=text.rstrip(),
            new_lines=len(lines),
            shown_lines=len(shown),
            filtered=tool_input.filter is not None,
            stored_ref=task.output_ref if task.adopted else None,
            chunk_ref=chunk_ref,
            notes=(note,) if note else (),
        )

    def to_result(self, data: BackgroundReport, ctx: ToolContext) -> str:
        elapsed = f"{data.elapsed_s:.0f} s"
        status = {
            "running": f"running (for {elapsed} so far)",
            "completed": f"completed with exit code 0 after {elapsed}",
            "failed": f"failed with exit code {data.exit_code} after {elapsed}",
            "killed": f"stopped by KillShell after {elapsed}",
        }[data.status]
        if data.text:
            body = data.text
        elif data.filtered and data.new_lines:
            body = f"(None of the {data.new_lines} new lines matched the filter.)"
        else:
            body = "(No new output since the last read.)"
        lines = [f"{data.id}: {status}", body]
        if data.filtered and data.shown_lines:
            lines.append(f"({data.shown_lines} of {data.new_lines} new lines matched the filter.)")
        if data.stored_ref is not None:
            lines.append(f"(Its complete output is stored as {data.stored_ref}.)")
        lines.extend(f"({note})" for note in data.notes)
        return "\n".join(lines)
