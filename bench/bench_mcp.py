"""An MCP tool round trip through toolgate (runner, permission engine, adapter) vs the SDK's client directly.

Both call `get_current_time` on the reference `mcp-server-time` server over stdio, each with a server process of
its own. The two are timed in alternation, one call each per round, so that both see the same load (this machine
is shared: timing one after the other let a busy minute land on one side only). Goal: ≤ 1.2×.

A second figure times toolgate's own part of the call (lookup, schema check, permission decision, redaction,
result mapping) against an MCP tool whose server answers at once, in-process: what the ratio is made of.
"""

from __future__ import annotations

import json
import os
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
from toolgate.core.permission import NonInteractiveApprover
from toolgate.mcp.manager import McpManager
from toolgate.mcp.tool import McpTool
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

ROUNDS = 300
WARMUP = 20
SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
ARGS = {"timezone": "Europe/Berlin"}


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


@asynccontextmanager
async def _direct() -> AsyncIterator[Callable[[], Awaitable[None]]]:
    params = StdioServerParameters(command=str(SERVER["command"]), args=list(SERVER["args"]))
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


def _caller(runtime: Runtime) -> Callable[[], Awaitable[None]]:
    counter = iter(range(10**9))

    async def once() -> None:
        use = ToolUse(id=f"t{next(counter)}", name="mcp__time__get_current_time", input=ARGS)
        [result] = await runtime.orchestrator.run_turn([use])
        assert not result.is_error, result

    return once


@asynccontextmanager
async def _through_toolgate(workdir: Path) -> AsyncIterator[tuple[Callable[[], Awaitable[None]], Runtime]]:
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


async def _alternate(a: Callable[[], Awaitable[None]], b: Callable[[], Awaitable[None]]) -> tuple[list[float], ...]:
    times: tuple[list[float], list[float]] = ([], [])
    for round_ in range(WARMUP + ROUNDS):
        for index, once in enumerate((a, b) if round_ % 2 else (b, a)):
            start = time.perf_counter()
            await once()
            if round_ >= WARMUP:
                times[index if round_ % 2 else 1 - index].append(time.perf_counter() - start)
    return times


async def _run(report: Report, workdir: Path) -> None:
    async with _direct() as direct, _through_toolgate(workdir) as (through, runtime):
        direct_times, through_times = await _alternate(direct, through)
        real = runtime.registry.get("mcp__time__get_current_time")
        assert isinstance(real, McpTool)
        own = await _own_part(McpTool(_InstantConnection(real.connection), real.spec, real.name), workdir)  # type: ignore[arg-type]
    report.add(
        Figure(
            "mcp",
            "MCP tool round trip through toolgate (mcp-server-time)",
            median_us(through_times),
            "µs",
            "the SDK's client calling the same server directly (timed in alternation)",
            median_us(direct_times),
            note="goal ≤ 1.2×",
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
        for _ in range(ROUNDS * 3):
            start = time.perf_counter()
            await once()
            samples.append(time.perf_counter() - start)
        return samples
    finally:
        await runtime.aclose()
