"""Small tools that exist only for tests: each exercises one runner or orchestrator behaviour."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import anyio
from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError
from toolgate.core.file_state import FileRecord
from toolgate.core.messages import ImageBlock, ImageSource, TextBlock, ToolResultContent
from toolgate.core.permission import NonInteractiveApprover
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Rendered, Tool, ToolInput
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.tools.tool_output import ToolOutputTool
from toolgate.tools.tool_output_grep import ToolOutputGrepTool


class EchoInput(ToolInput):
    text: str = ""
    count: int = 1


class EchoTool(Tool[EchoInput, str]):
    """Read-only and concurrency-safe: echoes its text."""

    name = "Echo"
    aliases = ("Say",)
    input_model = EchoInput
    traits = LOOKS_ONLY

    def description(self, ctx: DescribeContext) -> str:
        return f"Echo text back (mode {ctx.mode.value})."

    async def call(self, tool_input: EchoInput, ctx: ToolContext) -> str:
        return tool_input.text * tool_input.count

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class BareInput(ToolInput):
    pass


class BareTool(Tool[BareInput, str]):
    """Answers none of the optional questions: must be treated as writing and unsafe."""

    name = "Bare"
    input_model = BareInput

    def description(self, ctx: DescribeContext) -> str:
        return "A tool with every default."

    async def call(self, tool_input: BareInput, ctx: ToolContext) -> str:
        return "bare ran"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class FailInput(ToolInput):
    where: str = Field(description="validate | call | state | map | empty | rendered-error")


class FailTool(Tool[FailInput, str]):
    name = "Fail"
    input_model = FailInput

    def description(self, ctx: DescribeContext) -> str:
        return "Fails in the requested place."

    def is_read_only(self, tool_input: FailInput) -> bool:
        return True

    async def validate(self, tool_input: FailInput, ctx: ToolContext) -> None:
        if tool_input.where == "validate":
            raise RuntimeError("validator exploded")
        if tool_input.where == "state":
            raise StateError("The thing is not in the state you assumed; look again.")

    async def call(self, tool_input: FailInput, ctx: ToolContext) -> str:
        if tool_input.where == "call":
            raise ValueError("secret internal detail")
        return tool_input.where

    def to_result(self, data: str, ctx: ToolContext) -> ToolResultContent | Rendered:
        if data == "map":
            raise KeyError("mapping broke")
        if data == "empty":
            return "   "
        if data == "rendered-error":
            return Rendered("exit 3: it failed but here is output", is_error=True)
        return data


@dataclass
class Probe:
    """Shared between test tools: records overlap, order and lets a test hold calls until released."""

    running: int = 0
    max_running: int = 0
    started: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    release: anyio.Event = field(default_factory=anyio.Event)
    all_started: anyio.Event = field(default_factory=anyio.Event)
    expected: int = 0


class SlowInput(ToolInput):
    label: str
    hold: bool = False  # wait until the probe releases
    delay_steps: int = 0  # yield to the event loop this many times (completion order without sleeping)
    safe: bool = True
    partial: str | None = None  # what to report if cancelled


class SlowTool(Tool[SlowInput, str]):
    name = "Slow"
    input_model = SlowInput

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    def description(self, ctx: DescribeContext) -> str:
        return "Records overlap."

    def is_read_only(self, tool_input: SlowInput) -> bool:
        return True

    def is_concurrency_safe(self, tool_input: SlowInput) -> bool:
        return tool_input.safe

    async def call(self, tool_input: SlowInput, ctx: ToolContext) -> str:
        probe = self.probe
        probe.running += 1
        probe.max_running = max(probe.max_running, probe.running)
        probe.started.append(tool_input.label)
        if len(probe.started) == probe.expected:
            probe.all_started.set()
        try:
            if tool_input.partial is not None:
                ctx.partial_result = tool_input.partial
            if tool_input.hold:
                await probe.release.wait()
            for _ in range(tool_input.delay_steps):
                await anyio.lowlevel.checkpoint()
            ctx.commit(lambda s, label=tool_input.label: s.logger.info("commit %s", label))
            return tool_input.label
        finally:
            probe.running -= 1
            probe.finished.append(tool_input.label)

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class PutInput(ToolInput):
    path: str
    text: str


class PutTool(Tool[PutInput, str]):
    """Writes a file (not read-only, not concurrency-safe) and records it like a real write would."""

    name = "Put"
    input_model = PutInput

    def description(self, ctx: DescribeContext) -> str:
        return "Write a file."

    def paths(self, tool_input: PutInput, ctx: ToolContext) -> list[Path]:
        return [ctx.resolve_path(tool_input.path)]

    async def call(self, tool_input: PutInput, ctx: ToolContext) -> str:
        path = ctx.resolve_path(tool_input.path)
        path.write_text(tool_input.text)
        st = path.stat()
        record = FileRecord(tool_input.text, st.st_mtime_ns, None, None, True, st.st_size)
        ctx.commit(lambda s: s.file_state.set(path, record))
        return f"wrote {path.name}"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


# --- oversized results, for the output store's hook and the ToolOutput(Grep) tools -------------------------


class BigInput(ToolInput):
    text: str = ""
    repeat: int = Field(default=1, ge=1)
    image: bool = False
    error: bool = False


class Big(Tool[BigInput, ToolResultContent]):
    """Returns `text * repeat` (as an error when asked), optionally with an image block."""

    name = "Big"
    input_model = BigInput
    max_result_chars: ClassVar[int | None] = 1_000

    def description(self, ctx: DescribeContext) -> str:
        return "test tool"

    def is_read_only(self, tool_input: BigInput) -> bool:
        return True

    async def call(self, tool_input: BigInput, ctx: ToolContext) -> ToolResultContent:
        text = tool_input.text * tool_input.repeat
        if tool_input.image:
            image = ImageBlock(source=ImageSource(media_type="image/png", data="iVBORw0KGgo="))
            return [TextBlock(text=text), image]
        return text

    def to_result(self, data: ToolResultContent, ctx: ToolContext) -> ToolResultContent | Rendered:
        return Rendered(data, is_error=True) if ctx.tool_use_id.endswith("err") else data


class Unlimited(Big):
    name = "Unlimited"
    max_result_chars = None


def oversized_runtime(tmp_path: Path) -> Runtime:
    """A runtime with Big, Unlimited, ToolOutput and ToolOutputGrep, storing outputs under tmp_path/session."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return build_runtime(
        workspace,
        NonInteractiveApprover(),
        RuntimeOptions(
            tools=[Big(), Unlimited(), ToolOutputTool(), ToolOutputGrepTool()], data_dir=tmp_path / "session"
        ),
    )


def numbered_lines(result_text: str) -> list[tuple[int, str]]:
    out = []
    for line in result_text.split("\n"):
        number, tab, rest = line.partition("\t")
        if tab and number.isdigit():
            out.append((int(number), rest))
    return out
