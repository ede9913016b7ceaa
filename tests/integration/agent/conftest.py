"""Fixtures for the agent tests: the mock model server, and chats wired to it over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from tests.integration.agent.helpers import ChatFactory, Sleeps

from toolgate.agent.loop import AgentChat
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.retry import RetryPolicy
from toolgate.core.permission import NonInteractiveApprover
from toolgate.core.tool import AnyTool
from toolgate.mockmodel import MockModelServer
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools


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


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def make_chat(workspace: Path, sleeps: Sleeps) -> AsyncIterator[ChatFactory]:
    chats: list[AgentChat] = []

    def make(
        mock: MockModelServer,
        provider: str = "anthropic",
        *,
        tools: list[AnyTool] | None = None,
        **options: Any,
    ) -> AgentChat:
        config = ModelConfig(
            provider=provider,  # type: ignore[arg-type]
            base_url=mock.url if provider == "anthropic" else mock.openai_url,
            api_key=SecretStr("test-key"),
            model="mock-model",
            timeout_seconds=30,
        )
        runtime = build_runtime(
            workspace, NonInteractiveApprover(), RuntimeOptions(tools=[*builtin_tools(), *(tools or [])])
        )
        options.setdefault("system_prompt", "You are a test model.")
        options.setdefault("retry", RetryPolicy(max_attempts=4, sleep=sleeps))
        chat = AgentChat(runtime, make_provider(config), **options)
        chats.append(chat)
        return chat

    yield make
    for chat in chats:
        await chat.aclose()
