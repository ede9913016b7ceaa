"""`toolgate chat` with one more tool, Gate, that never finishes: lets a test kill a session mid-turn.

Run as `python tests/agent/gate_chat.py chat --print ...`; everything else is the real command.
"""

from __future__ import annotations

import sys

import anyio

import toolgate.runtime
from toolgate.cli import main
from toolgate.core.context import ToolContext
from toolgate.core.tool import AnyTool, DescribeContext, Tool, ToolInput
from toolgate.tools import builtin_tools


class GateInput(ToolInput):
    pass


class NeverTool(Tool[GateInput, str]):
    name = "Gate"
    input_model = GateInput

    def description(self, ctx: DescribeContext) -> str:
        return "Wait forever (test tool)."

    def is_read_only(self, tool_input: GateInput) -> bool:
        return True

    async def call(self, tool_input: GateInput, ctx: ToolContext) -> str:
        await anyio.sleep_forever()
        return ""

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


def tools() -> list[AnyTool]:
    return [*builtin_tools(), NeverTool()]


toolgate.runtime.builtin_tools = tools
sys.exit(main(sys.argv[1:]))
