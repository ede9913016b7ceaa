"""Fixtures for the agent tests: the mock model server, small test tools, and a chat wired to both."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import SecretStr

from toolgate.agent.loop import ChatSession
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.retry import RetryPolicy
from toolgate.cli.run_tools import NonInteractiveApprover
from toolgate.core.context import ToolContext
from toolgate.core.messages import ImageBlock, ImageSource, TextBlock, ToolResultContent
from toolgate.core.tool import AnyTool, DescribeContext, Tool, ToolInput
from toolgate.mockmodel import MockModelServer
from toolgate.runtime import build_runtime
from toolgate.tools import builtin_tools

# A 1x1 transparent PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()


class GateInput(ToolInput):
    label: str = "gate"


class GateTool(Tool[GateInput, str]):
    """Runs until `opened` is set; records when it started. Cancelled, it leaves a partial result."""

    name = "Gate"
    input_model = GateInput

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.opened = anyio.Event()
        self.calls: list[str] = []

    def description(self, ctx: DescribeContext) -> str:
        return "Wait at a gate (test tool)."

    def is_read_only(self, tool_input: GateInput) -> bool:
        return True

    async def call(self, tool_input: GateInput, ctx: ToolContext) -> str:
        self.calls.append(tool_input.label)
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
        return [
            TextBlock(text="one pixel"),
            ImageBlock(source=ImageSource(media_type="image/png", data=PNG)),
        ]


@pytest.fixture
def mock_model() -> Iterator[Callable[[list[Any]], MockModelServer]]:
    started: list[MockModelServer] = []

    def start(steps: list[Any]) -> MockModelServer:
        server = MockModelServer(steps).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


class Sleeps:
    """An injected backoff sleep: records the delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


ChatFactory = Callable[..., ChatSession]


@pytest.fixture
async def make_chat(workspace: Path, sleeps: Sleeps) -> AsyncIterator[ChatFactory]:
    chats: list[ChatSession] = []

    def make(
        mock: MockModelServer,
        provider: str = "anthropic",
        *,
        tools: list[AnyTool] | None = None,
        **options: Any,
    ) -> ChatSession:
        config = ModelConfig(
            provider=provider,  # type: ignore[arg-type]
            base_url=mock.url if provider == "anthropic" else mock.openai_url,
            api_key=SecretStr("test-key"),
            model="mock-model",
            timeout_seconds=30,
        )
        runtime = build_runtime(workspace, NonInteractiveApprover(), tools=[*builtin_tools(), *(tools or [])])
        options.setdefault("system_prompt", "You are a test model.")
        options.setdefault("retry", RetryPolicy(max_attempts=4, sleep=sleeps))
        chat = ChatSession(runtime, make_provider(config), **options)
        chats.append(chat)
        return chat

    yield make
    for chat in chats:
        await chat.aclose()


class Events:
    """Collects a chat's events; `wait_for` waits (with a deadline) until they satisfy a condition."""

    def __init__(self, chat: ChatSession) -> None:
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
