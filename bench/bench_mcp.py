"""An MCP tool round trip through toolgate (runner, permission engine, adapter) vs the SDK's client directly.

Both call `get_current_time` on the reference `mcp-server-time` server over stdio, each with a server process of
its own started with the same (scrubbed) environment. The two are timed in alternation, one call each per round
and the order flipped every round, so that both see the same load: this machine is shared, and timing one after
the other let a busy minute land on one side only. Goal: ≤ 1.2×.

Figures (medians over ROUNDS rounds after WARMUP rounds that are not counted):
- the wall-clock round trip, toolgate vs the SDK's client; the note gives the ratio in each of BLOCKS equal
  parts of the run, so a reader sees how steady it was;
- this process's CPU time per call (`time.thread_time`: the event loop's thread, where both clients run), which
  the other processes on the machine disturb far less than the wall clock;
- toolgate's own part of a call (lookup, schema check, permission decision, redaction, result mapping) against
  an MCP tool whose server answers at once, in-process: what the difference is made of.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.report import Figure, Report, median_us
from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import NonInteractiveApprover
from toolgate.mcp.connection import server_environment
from toolgate.mcp.manager import McpManager
from toolgate.mcp.tool import McpTool
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

ROUNDS = 1200
WARMUP = 60
BLOCKS = 4
SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
ARGS = {"timezone": "Europe/Berlin"}

Once = Callable[[], Awaitable[None]]


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


@asynccontextmanager
async def _direct() -> AsyncIterator[Once]:
    params = StdioServerParameters(
        command=str(SERVER["command"]), args=list(SERVER["args"]), env=server_environment(os.environ, {})
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()

        async def once() -> None:
            result = await session.call_tool("get_current_time", ARGS)
            assert not result.is_error

        yield once


def _runtime(workdir: Path, tools: list[Any]) -> Runtime:
    return build_runtime(
        workdir,
        NonInteractiveApprover(),
        RuntimeOptions(read_settings=False, rules={"allow": ["mcp__time"]}, tools=[*builtin_tools(), *tools]),
    )


def _caller(runtime: Runtime) -> Once:
    counter = iter(range(10**9))

    async def once() -> None:
        use = ToolUse(id=f"t{next(counter)}", name="mcp__time__get_current_time", input=ARGS)
        # A token per turn, as the agent loop, the sidecar and `run-tools` all pass one.
        [result] = await runtime.orchestrator.run_turn([use], CancelToken())
        assert not result.is_error, result

    return once


@asynccontextmanager
async def _through_toolgate(workdir: Path) -> AsyncIterator[tuple[Once, Runtime]]:
    config = workdir / "config"
    (config / "toolgate").mkdir(parents=True)
    (config / "toolgate" / "settings.json").write_text(json.dumps({"mcpServers": {"time": SERVER}}))
    environ = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    options: dict[str, Any] = {"data_dir": workdir / "data", "home": workdir, "environ": environ}
    first = McpManager(workdir, **options)
    server = first.server("time")
    assert server is not None
    first.store.approve(server)
    async with McpManager(workdir, **options) as manager:
        await manager.start()
        runtime = _runtime(workdir, list(manager.tools()))
        try:
            yield _caller(runtime), runtime
        finally:
            await runtime.aclose()


class _InstantConnection:
    """Stands in for a connection whose server answers at once, so only toolgate's own work is timed."""

    def __init__(self, real: Any) -> None:
        self.server = real.server
        self.state = "running"
        self._answer = mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=json.dumps({"timezone": "Europe/Berlin"}))]
        )

    async def call(self, tool: str, arguments: dict[str, Any], time_limit: float) -> mcp_types.CallToolResult:
        return self._answer


class _Samples:
    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []


async def _alternate(first: Once, second: Once) -> tuple[_Samples, _Samples]:
    samples = (_Samples(), _Samples())
    for round_ in range(WARMUP + ROUNDS):
        order = (0, 1) if round_ % 2 else (1, 0)
        for index in order:
            once = (first, second)[index]
            wall, cpu = time.perf_counter(), time.thread_time()
            await once()
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            if round_ >= WARMUP:
                samples[index].wall.append(wall)
                samples[index].cpu.append(cpu)
    return samples


def _block_ratios(through: list[float], direct: list[float]) -> str:
    size = len(through) // BLOCKS
    ratios = [
        statistics.median(through[i * size : (i + 1) * size]) / statistics.median(direct[i * size : (i + 1) * size])
        for i in range(BLOCKS)
    ]
    return ", ".join(f"{r:.2f}×" for r in ratios)


async def _run(report: Report, workdir: Path) -> None:
    async with _direct() as direct, _through_toolgate(workdir) as (through, runtime):
        direct_s, through_s = await _alternate(direct, through)
        real = runtime.registry.get("mcp__time__get_current_time")
        assert isinstance(real, McpTool)
        own = await _own_part(McpTool(_InstantConnection(real.connection), real.spec, real.name), workdir)  # type: ignore[arg-type]
    baseline = "the SDK's client calling the same server directly (timed in alternation)"
    blocks = _block_ratios(through_s.wall, direct_s.wall)
    report.add(
        Figure(
            "mcp",
            "MCP tool round trip through toolgate (mcp-server-time)",
            median_us(through_s.wall),
            "µs",
            baseline,
            median_us(direct_s.wall),
            note=f"goal ≤ 1.2×; median of {ROUNDS} rounds; by quarter of the run: {blocks}",
        )
    )
    report.add(
        Figure(
            "mcp",
            "this process's CPU per MCP call through toolgate",
            median_us(through_s.cpu),
            "µs",
            "the SDK's client's CPU per call",
            median_us(direct_s.cpu),
            note="thread_time of the event loop's thread; less disturbed by other processes than the wall clock",
        )
    )
    report.add(Figure("mcp", "toolgate's own work per MCP call (a server that answers at once)", median_us(own), "µs"))


async def _own_part(tool: McpTool, workdir: Path) -> list[float]:
    runtime = _runtime(workdir, [tool])
    once = _caller(runtime)
    try:
        for _ in range(WARMUP):
            await once()
        samples = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            await once()
            samples.append(time.perf_counter() - start)
        return samples
    finally:
        await runtime.aclose()
