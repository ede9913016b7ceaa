"""One reply from the model: streamed, retried on transient failures, and cut short by an interrupt.

The text streamed so far is kept (`streamed`) so that an interrupt while streaming can keep what the person
already saw; a retried attempt voids its text first, so an interrupt after it keeps none of the failed reply.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import anyio

from toolgate.agent.events import ChatEvent, Retrying, TextDelta
from toolgate.agent.providers.base import ModelError, ModelRequest, Provider, ReplyCompleted, StreamEvent, TextArrived
from toolgate.agent.retry import RetryPolicy
from toolgate.core.orchestrator import CancelToken


class ReplyStream:
    """Streams the replies of one chat, telling its listeners (`emit`) each piece of text and each retry."""

    def __init__(self, emit: Callable[[ChatEvent], None]) -> None:
        self._emit = emit
        self.streamed: list[str] = []  # the text of the attempt under way

    async def request(
        self, provider: Provider, retry: RetryPolicy, request: ModelRequest, token: CancelToken
    ) -> ReplyCompleted | None:
        """Stream one reply, retrying transient failures. None when interrupted first."""
        reply: ReplyCompleted | None = None
        failure: ModelError | None = None
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(token.cancel_when_set, scope)
                try:
                    reply = await self._attempts(provider, retry, request)
                except ModelError as exc:
                    failure = exc
                group.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return reply

    async def _attempts(self, provider: Provider, retry: RetryPolicy, request: ModelRequest) -> ReplyCompleted:
        attempt = 0
        while True:
            attempt += 1
            self.streamed = []
            replies: list[ReplyCompleted] = []
            try:
                await provider.stream(request, functools.partial(self._on_stream, replies=replies))
            except ModelError as exc:
                if not exc.retryable or attempt >= retry.max_attempts:
                    if exc.retryable:
                        exc.message += f" Gave up after {attempt} attempts; try again later."
                    raise
                delay = retry.delay(attempt, exc.retry_after)
                self._emit(
                    Retrying(
                        attempt=attempt,
                        max_attempts=retry.max_attempts,
                        delay_seconds=round(delay, 3),
                        kind=exc.kind,
                        message=exc.message,
                        discard_partial=bool(self.streamed),
                    )
                )
                self.streamed = []  # that reply is void: an interrupt now must not keep its text
                await retry.sleep(delay)
                continue
            if not replies:
                raise ModelError("server", "The model's reply ended without being complete (the stream was cut).")
            return replies[-1]

    def _on_stream(self, event: StreamEvent, replies: list[ReplyCompleted]) -> None:
        if isinstance(event, TextArrived):
            self.streamed.append(event.text)
            self._emit(TextDelta(text=event.text))
        elif isinstance(event, ReplyCompleted):
            replies.append(event)
