"""The agent loop's own overhead per tool turn, with the mock model answering instantly.

Two gaps per turn, both on one clock (the mock runs in this process):
- tool results ready → the next request arrives at the model: building the request (tool definitions,
  conversation), the transcript line, events, the SDK and the local HTTP hop. Baseline: the SDK alone, from
  the call to the request's arrival, for a request of the same size.
- the response's last byte → its tool starts: the SDK finishing the stream, our parsing of the reply, the
  transcript line, events, and the runner's steps up to `call`. Baseline: a Read of 1 KiB through the runner,
  i.e. the tools' own time.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from pydantic import SecretStr

from bench.report import Figure, Report, median_us, time_async
from toolgate.agent.loop import AgentChat
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.providers.base import ModelRequest, Provider, ReplyCompleted, StreamEvent, StreamSink
from toolgate.agent.transcript import Transcript
from toolgate.core.context import ToolContext
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.orchestrator import CancelToken, ResultListener
from toolgate.core.permission import NonInteractiveApprover
from toolgate.core.tool import DescribeContext, Tool, ToolInput
from toolgate.mockmodel import MockModelServer
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

TURNS = 150


class ProbeInput(ToolInput):
    pass


class ProbeTool(Tool[ProbeInput, None]):
    """Does nothing but note when it started."""

    name = "Probe"
    input_model = ProbeInput

    def __init__(self) -> None:
        self.starts: list[float] = []

    def description(self, ctx: DescribeContext) -> str:
        return "Note the time (benchmark tool)."

    def is_read_only(self, tool_input: ProbeInput) -> bool:
        return True

    async def call(self, tool_input: ProbeInput, ctx: ToolContext) -> None:
        self.starts.append(time.perf_counter())

    def to_result(self, data: None, ctx: ToolContext) -> str:
        return "noted"


class TimedProvider:
    """Wraps a provider to note when the loop hands it a request and when it reports a complete reply."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.base_url = inner.base_url
        self.max_tokens = inner.max_tokens
        self.info = inner.info
        self.handed: list[float] = []
        self.completed: list[float] = []

    async def stream(self, request: ModelRequest, sink: StreamSink) -> None:
        self.handed.append(time.perf_counter())

        def timed_sink(event: StreamEvent) -> None:
            if isinstance(event, ReplyCompleted):
                self.completed.append(time.perf_counter())
            sink(event)

        await self.inner.stream(request, timed_sink)

    async def aclose(self) -> None:
        await self.inner.aclose()


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


async def _run(report: Report, workdir: Path) -> None:
    for name in ("anthropic", "openai"):
        m = await _loop(workdir, name)
        note = f"median of {TURNS} turns"
        tool = "the tool's own time (Read 1 KiB via runner)"
        rows = [
            ("results ready → request handed to SDK", "own_send", tool, "tool"),
            ("reply complete → its tool starts", "own_start", tool, "tool"),
            ("results ready → request at the model", "send", "SDK alone: call → request at the model", "sdk"),
            ("reply's last byte → its tool starts", "start", tool, "tool"),
        ]
        for label, key, baseline, base_key in rows:
            report.add(Figure("agent", f"{name}: {label}", m[key], "µs", baseline, m[base_key], note=note))


async def _loop(workdir: Path, provider_name: str) -> dict[str, float]:
    (workdir / "one.txt").write_text(("x" * 63 + "\n") * 16)
    probe = ProbeTool()
    steps: list[dict[str, Any]] = [{"tool_uses": [{"name": "Probe", "input": {}}], "chunk_chars": 64}] * TURNS
    steps.append({"text": "done"})
    with MockModelServer(steps) as mock:
        config = ModelConfig(
            provider=provider_name,
            base_url=mock.url if provider_name == "anthropic" else mock.openai_url,
            api_key=SecretStr("bench"),
            model="mock-model",
        )
        runtime = build_runtime(workdir, NonInteractiveApprover(), RuntimeOptions(tools=[*builtin_tools(), probe]))
        ready: list[float] = []
        run_turn = runtime.orchestrator.run_turn

        async def timed(
            uses: Sequence[ToolUse], cancel: CancelToken | None = None, on_result: ResultListener | None = None
        ) -> list[ToolResult]:
            results = await run_turn(uses, cancel, on_result)
            ready.append(time.perf_counter())
            return results

        runtime.orchestrator.run_turn = timed  # type: ignore[method-assign]
        provider = TimedProvider(make_provider(config))
        transcript = Transcript(workdir / f"{provider_name}.jsonl")
        chat = AgentChat(runtime, provider, system_prompt="bench", transcript=transcript, max_turns=TURNS + 1)
        assert await chat.send("go") == "end_turn"
        requests = mock.requests

        def median_gap(ends: list[float], starts: list[float]) -> float:
            return statistics.median(e - s for e, s in zip(ends, starts, strict=True)) * 1e6

        figures = {
            "own_send": median_gap(provider.handed[1 : TURNS + 1], ready),
            "send": median_gap([r.received_at for r in requests[1 : TURNS + 1]], ready),
            "own_start": median_gap(probe.starts, provider.completed[:TURNS]),
            "start": median_gap(probe.starts, [r.finished_at or 0.0 for r in requests[:TURNS]]),
        }

        # A request of the median size, sent by the provider alone (no loop around it): the first message,
        # then half the (tool_use, tool_result) pairs.
        last = ModelRequest(
            system=chat.system_prompt,
            tools=runtime.registry.definitions(runtime.runner.describe_context()),
            messages=chat.messages[: 1 + 2 * (TURNS // 2)],
            max_tokens=chat.max_tokens,
        )
        mock.add_steps([{"text": "x"}] * 30)
        sdk_alone: list[float] = []

        def ignore(_event: StreamEvent) -> None:
            return None

        for _ in range(30):
            before = len(mock.requests)
            started = time.perf_counter()
            await provider.inner.stream(last, ignore)
            sdk_alone.append(mock.requests[before].received_at - started)
        figures["sdk"] = statistics.median(sdk_alone) * 1e6

        counter = itertools.count()

        async def one_read() -> None:
            # A different offset each time defeats the "unchanged since last read" shortcut.
            n = next(counter)
            await run_turn([ToolUse(id=f"r{n}", name="Read", input={"file_path": "one.txt", "offset": 1 + n % 2})])

        figures["tool"] = median_us(await time_async(one_read, 500))
        await chat.aclose()
    return figures
