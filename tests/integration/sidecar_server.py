"""The real sidecar, plus a few test-only tools, run as a subprocess by the integration tests.

The tools are boundaries (they stand in for Edit/Write/Bash, which live elsewhere); the server, the
JSON-RPC, the runner and the approval/review flow are the real ones.
"""

from __future__ import annotations

import difflib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
from pydantic import Field

from toolgate.cli.serve import run_server
from toolgate.core.context import ToolContext
from toolgate.core.documents import OPEN_DOCUMENTS
from toolgate.core.errors import StateError
from toolgate.core.permission import FileProposal
from toolgate.core.tool import AnyTool, DescribeContext, Tool, ToolInput
from toolgate.sidecar import protocol as p
from toolgate.sidecar.server import ToolgateServer
from toolgate.tools import builtin_tools


class GateInput(ToolInput):
    label: str


class GateTool(Tool[GateInput, str]):
    """Not read-only, proposes no file change: the minimal policy asks for approval."""

    name = "Gate"
    input_model = GateInput

    def description(self, ctx: DescribeContext) -> str:
        return "Test tool that needs approval."

    async def call(self, tool_input: GateInput, ctx: ToolContext) -> str:
        return f"gate {tool_input.label} passed"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class ProposeWriteInput(ToolInput):
    file_path: str
    content: str


def _refuse_dirty(path: Path, ctx: ToolContext) -> None:
    if ctx.get(OPEN_DOCUMENTS).is_dirty(path):
        raise StateError(f"{path} has unsaved changes in the editor; ask the user to save or revert it first.")


class ProposeWriteTool(Tool[ProposeWriteInput, str]):
    """Writes a whole file after a diff review, refusing files that are dirty in the editor."""

    name = "ProposeWrite"
    input_model = ProposeWriteInput

    def description(self, ctx: DescribeContext) -> str:
        return "Test tool that writes a file after review."

    def paths(self, tool_input: ProposeWriteInput, ctx: ToolContext) -> Sequence[Path]:
        return [ctx.resolve_path(tool_input.file_path)]

    async def validate(self, tool_input: ProposeWriteInput, ctx: ToolContext) -> None:
        _refuse_dirty(ctx.resolve_path(tool_input.file_path), ctx)

    async def propose(self, tool_input: ProposeWriteInput, ctx: ToolContext) -> list[FileProposal] | None:
        path = ctx.resolve_path(tool_input.file_path)
        original = path.read_text() if path.exists() else None
        return [FileProposal(path=str(path), original=original, proposed=tool_input.content)]

    async def call(self, tool_input: ProposeWriteInput, ctx: ToolContext) -> str:
        path = ctx.resolve_path(tool_input.file_path)
        _refuse_dirty(path, ctx)
        reviewed = ctx.reviewed[0] if ctx.reviewed else None
        final = reviewed.content if reviewed and reviewed.content is not None else tool_input.content
        path.write_text(final)
        if reviewed is None or not reviewed.user_modified:
            return f"Wrote {path}."
        diff = "".join(
            difflib.unified_diff(
                tool_input.content.splitlines(keepends=True), final.splitlines(keepends=True), "proposed", "written"
            )
        )
        return f"Wrote {path}. The user changed your proposal before accepting it:\n{diff}"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class SleepInput(ToolInput):
    seconds: float = Field(default=600)


class SleepTool(Tool[SleepInput, str]):
    """Runs `sleep` in its own process group until it ends or the call is cancelled (then kills the group)."""

    name = "Sleep"
    input_model = SleepInput

    def description(self, ctx: DescribeContext) -> str:
        return "Test tool that runs a long process."

    def is_read_only(self, tool_input: SleepInput) -> bool:
        return True

    def is_concurrency_safe(self, tool_input: SleepInput) -> bool:
        return True

    async def call(self, tool_input: SleepInput, ctx: ToolContext) -> str:
        process = await anyio.open_process(
            ["sleep", str(tool_input.seconds)],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        ctx.progress("started", f"pid={process.pid}")
        try:
            await process.wait()
        except anyio.get_cancelled_exc_class():
            os.killpg(process.pid, signal.SIGKILL)
            with anyio.CancelScope(shield=True):
                await process.wait()
            ctx.partial_result = f"Sleep was interrupted; its process group {process.pid} was killed."
            raise
        return f"slept {tool_input.seconds}s"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class NoisyTool(Tool[ToolInput, str]):
    """Writes to stdout the careless ways: print(), and a child process that inherits fd 1."""

    name = "Noisy"
    input_model = ToolInput

    def description(self, ctx: DescribeContext) -> str:
        return "Test tool that writes to stdout."

    def is_read_only(self, tool_input: ToolInput) -> bool:
        return True

    async def call(self, tool_input: ToolInput, ctx: ToolContext) -> str:
        print("noise from print()", flush=True)
        await anyio.run_process(["echo", "noise from a child process"], stdout=None, stderr=None, check=True)
        return "made some noise"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


def test_tools() -> list[AnyTool]:
    return [*builtin_tools(), GateTool(), ProposeWriteTool(), SleepTool(), NoisyTool()]


async def crash(params: p.Empty) -> p.Empty:
    raise RuntimeError("this handler always crashes")


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="sidecar %(levelname)s %(name)s: %(message)s")
    logging.getLogger("toolgate").setLevel(logging.INFO)
    server = ToolgateServer(tools=test_tools)
    server.add_method("test/crash", crash, p.Method("test/crash", "clientToServer", p.Empty, p.Empty, "crash"))
    run_server(server)


if __name__ == "__main__":
    main()
