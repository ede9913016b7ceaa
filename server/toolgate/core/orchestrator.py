"""Run one assistant turn's tool calls: batching, the concurrency limit, ordering and cancellation.

Walk the calls in order; consecutive concurrency-safe calls form one concurrent batch, every other call
runs alone. A write is never reordered around (Read A → Edit A → Read A reads the edit). Results come
back in tool_use order, and the session changes a batch asks for are applied in tool_use order after it.
On cancellation every call without a result gets one, so the transcript never holds a dangling tool_use.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import anyio

from toolgate.core.context import ToolContext
from toolgate.core.errors import ErrorKind
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.runner import PreparedCall, ToolRunner, error_result

ResultListener = Callable[[ToolResult], None]

DEFAULT_MAX_CONCURRENCY = 10
CONCURRENCY_ENV = "TOOLGATE_MAX_TOOL_CONCURRENCY"


def max_concurrency_from_env(environ: dict[str, str] | None = None) -> int:
    raw = (environ if environ is not None else os.environ).get(CONCURRENCY_ENV, "")
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_MAX_CONCURRENCY
    return value if value > 0 else DEFAULT_MAX_CONCURRENCY


class CancelToken:
    """Set once to interrupt a turn. Cheap to create; safe to set from any task."""

    def __init__(self) -> None:
        self._set = False
        # Made for the first waiter only: a turn watches scopes instead, and an anyio Event costs microseconds
        # to make (its backend is looked up) on every tools/run.
        self._event: anyio.Event | None = None
        self._scopes: list[anyio.CancelScope] = []

    def cancel(self) -> None:
        self._set = True
        if self._event is not None:
            self._event.set()
        for scope in list(self._scopes):
            scope.cancel()

    def watch(self, scope: anyio.CancelScope) -> None:
        """Cancel `scope` when this token is set (at once if it already is), until `unwatch`. Unlike
        `cancel_when_set` this needs no task beside the work: a turn's cost stays that of its calls."""
        self._scopes.append(scope)
        if self._set:
            scope.cancel()

    def unwatch(self, scope: anyio.CancelScope) -> None:
        self._scopes.remove(scope)

    @property
    def cancelled(self) -> bool:
        return self._set

    async def wait(self) -> None:
        await self._waiter().wait()

    async def cancel_when_set(self, scope: anyio.CancelScope) -> None:
        """Cancel `scope` once this token is set: start it in a task group beside the work it interrupts."""
        await self._waiter().wait()
        scope.cancel()

    def _waiter(self) -> anyio.Event:
        if self._event is None:
            self._event = anyio.Event()
            if self._set:
                self._event.set()
        return self._event


def partition(calls: Sequence[PreparedCall]) -> list[list[int]]:
    """Indices grouped into batches: runs of concurrency-safe calls together, every other call alone."""
    if len(calls) == 1:
        # Nothing to group it with, so it need not be classified: for Bash the classifier parses the command,
        # and a turn of one call (the usual turn) would parse it for nothing.
        return [[0]]
    batches: list[list[int]] = []
    previous_safe = False
    for index, call in enumerate(calls):
        safe = call.concurrency_safe  # once per call: the classifier may be costly
        if safe and previous_safe:
            batches[-1].append(index)
        else:
            batches.append([index])
        previous_safe = safe
    return batches


class Orchestrator:
    def __init__(self, runner: ToolRunner, max_concurrency: int | None = None) -> None:
        self.runner = runner
        self.max_concurrency = max_concurrency or max_concurrency_from_env()

    async def run_turn(
        self,
        uses: Sequence[ToolUse],
        cancel: CancelToken | None = None,
        on_result: ResultListener | None = None,
    ) -> list[ToolResult]:
        """Every call's result, in tool_use order. `on_result` hears each one as soon as it exists (completion
        order), so a UI can finish a quick call's card while a slow one still runs."""
        prepared = [self.runner.prepare(use) for use in uses]
        results: list[ToolResult | None] = [None] * len(prepared)
        contexts: list[ToolContext | None] = [None] * len(prepared)

        if cancel is None:
            # Nothing can interrupt this turn from outside: no scope to watch (a scope and a watcher task per
            # turn were a good part of a single call's overhead).
            for batch in partition(prepared):
                await self._run_batch(batch, prepared, results, contexts, on_result)
        else:
            with anyio.CancelScope() as scope:
                cancel.watch(scope)
                try:
                    for batch in partition(prepared):
                        if cancel.cancelled:
                            break
                        await self._run_batch(batch, prepared, results, contexts, on_result)
                finally:
                    cancel.unwatch(scope)

        for index, result in enumerate(results):
            if result is None:
                results[index] = synthetic = self._interrupted(prepared[index], contexts[index])
                if on_result is not None:
                    on_result(synthetic)
        return [r for r in results if r is not None]

    async def _run_batch(
        self,
        batch: list[int],
        prepared: list[PreparedCall],
        results: list[ToolResult | None],
        contexts: list[ToolContext | None],
        on_result: ResultListener | None,
    ) -> None:
        async def run_one(index: int) -> None:
            ctx = self.runner.new_context(prepared[index].use.id)
            contexts[index] = ctx
            try:
                results[index] = result = await self.runner.execute(prepared[index], ctx)
                if on_result is not None:
                    on_result(result)
            finally:
                # A shielded scope costs a few microseconds per call; most calls have nothing to close.
                if ctx.deps.holds_closable:
                    with anyio.CancelScope(shield=True):
                        await ctx.deps.aclose()

        try:
            if len(batch) == 1:
                await run_one(batch[0])
            else:
                limiter = anyio.CapacityLimiter(self.max_concurrency)

                async def limited(index: int) -> None:
                    async with limiter:
                        await run_one(index)

                async with anyio.create_task_group() as group:
                    for index in batch:
                        group.start_soon(limited, index)
        finally:
            # Changes are applied in tool_use order, and only for calls that finished; this also runs when
            # the batch is interrupted, so completed Reads are still recorded.
            for index in batch:
                ctx = contexts[index]
                if ctx is not None and results[index] is not None:
                    for change in ctx.changes:
                        change(self.runner.session)

    def _interrupted(self, call: PreparedCall, ctx: ToolContext | None) -> ToolResult:
        if ctx is not None and ctx.partial_result is not None:
            return ToolResult(tool_use_id=call.use.id, content=ctx.partial_result, is_error=True)
        if ctx is None:
            message = "Not run: the turn was interrupted before this call started."
        else:
            message = (
                "Interrupted while running: the turn was cancelled before this call finished. "
                "It may have partly taken effect; check before repeating it."
            )
        return error_result(call.use.id, ErrorKind.CANCELLED, message)
