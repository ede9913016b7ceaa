"""An interrupt reaches a child agent as an interrupt of its own chat (so each of its calls ends with its own result),
whenever it comes (at once, or while the child runs), and a child that fails raises its own error."""

from __future__ import annotations

from typing import cast

import anyio
import pytest

from toolgate.agent.events import StopReason
from toolgate.agent.loop import AgentChat
from toolgate.agent.subagents import send_interruptibly


class _Child:
    """The part of a child's AgentChat that the interrupt protocol uses: `send` runs until `interrupt`."""

    def __init__(self, failure: Exception | None = None) -> None:
        self.prompts: list[str] = []
        self.started = anyio.Event()
        self.finished: StopReason | None = None
        self._stop: anyio.Event | None = None
        self._failure = failure

    async def send(self, prompt: str) -> StopReason:
        self.prompts.append(prompt)
        self._stop = anyio.Event()  # like AgentChat.send: its interrupt token exists before its first await
        self.started.set()
        if self._failure is not None:
            raise self._failure
        await self._stop.wait()
        self.finished = "interrupted"
        return self.finished

    def interrupt(self) -> bool:
        if self._stop is None or self._stop.is_set():
            return False
        self._stop.set()
        return True


def _as_chat(child: _Child) -> AgentChat:
    return cast(AgentChat, child)


async def test_an_interrupt_while_the_child_runs_interrupts_it_and_waits_for_its_end() -> None:
    child = _Child()
    with anyio.fail_after(10):
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(send_interruptibly, _as_chat(child), "look")
                await child.started.wait()
                scope.cancel()
    assert child.prompts == ["look"] and child.finished == "interrupted"


async def test_an_interrupt_that_comes_at_once_leaves_no_child_running() -> None:
    child = _Child()
    with anyio.fail_after(10):
        with anyio.CancelScope() as scope:
            scope.cancel()  # the parent's call is cancelled before the child's send may have run at all
            await send_interruptibly(_as_chat(child), "look")
    # Either it never started, or it started and was interrupted as a chat is (its send ended on its own terms).
    assert child.prompts == [] or child.finished == "interrupted"


async def test_a_child_that_fails_raises_its_own_error() -> None:
    with anyio.fail_after(10), pytest.raises(RuntimeError, match="the model client broke"):
        await send_interruptibly(_as_chat(_Child(RuntimeError("the model client broke"))), "look")
