"""Helpers for the agent tests: small test tools, an event recorder and an injectable backoff sleep."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import anyio

from toolgate.agent.loop import AgentChat
from toolgate.core.context import ToolContext
from toolgate.core.messages import ImageBlock, ImageSource, TextBlock, ToolResultContent
from toolgate.core.tool import DescribeContext, Tool, ToolInput

# A 1x1 transparent PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()

ChatFactory = Callable[..., AgentChat]


class GateInput(ToolInput):
    label: str = "gate"


class GateTool(Tool[GateInput, str]):
    """Runs until `opened` is set; says when it started. Cancelled, it leaves a partial result."""

    name = "Gate"
    input_model = GateInput

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.opened = anyio.Event()

    def description(self, ctx: DescribeContext) -> str:
        return "Wait at a gate (test tool)."

    def is_read_only(self, tool_input: GateInput) -> bool:
        return True

    async def call(self, tool_input: GateInput, ctx: ToolContext) -> str:
        ctx.partial_result = f"{tool_input.label}: stopped at the gate"
        self.started.set()
        await self.opened.wait()
        return f"{tool_input.label}: passed"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class PictureInput(ToolInput):
    pass


class PictureTool(Tool[PictureInput, None]):
    name = "Picture"
    input_model = PictureInput

    def description(self, ctx: DescribeContext) -> str:
        return "Return a picture (test tool)."

    def is_read_only(self, tool_input: PictureInput) -> bool:
        return True

    async def call(self, tool_input: PictureInput, ctx: ToolContext) -> None:
        return None

    def to_result(self, data: None, ctx: ToolContext) -> ToolResultContent:
        return [TextBlock(text="one pixel"), ImageBlock(source=ImageSource(media_type="image/png", data=PNG))]


class Sleeps:
    """An injected backoff sleep: records the delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class Events:
    """Collects a chat's events; `wait_for` waits (with a deadline) until they satisfy a condition."""

    def __init__(self, chat: AgentChat) -> None:
        self.all: list[Any] = []
        self._changed = anyio.Event()
        chat.subscribe(self._add)

    def _add(self, event: Any) -> None:
        self.all.append(event)
        self._changed.set()
        self._changed = anyio.Event()

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.all if isinstance(e, kind)]

    async def wait_for(self, condition: Callable[[], bool], deadline: float = 10.0) -> None:
        with anyio.fail_after(deadline):
            while True:
                changed = self._changed
                if condition():
                    return
                await changed.wait()
