"""The real sidecar with the real tools, plus a few test-only ones, run as a subprocess by the tests.

The test tools are boundaries: a call that always needs approval, a long-running process that stands in
for Bash, and one that writes to stdout carelessly. The server, the JSON-RPC, the runner, the file tools
and the approval/review flow are the real ones.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys

import anyio
from pydantic import Field

from toolgate.cli.serve import run_server
from toolgate.core.context import ToolContext
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
    return [*builtin_tools(), GateTool(), SleepTool(), NoisyTool()]


async def crash(params: p.Empty) -> p.Empty:
    raise RuntimeError("this handler always crashes")


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="sidecar %(levelname)s %(name)s: %(message)s")
    logging.getLogger("toolgate").setLevel(logging.INFO)
    server = ToolgateServer(tools=test_tools, trust_workspaces=True)  # as the extension starts it
    server.add_method("test/crash", crash, p.Method("test/crash", "clientToServer", p.Empty, p.Empty, "crash"))
    run_server(server)


if __name__ == "__main__":
    main()
