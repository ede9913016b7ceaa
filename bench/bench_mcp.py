"""An MCP tool round trip through toolgate (runner, permission engine, adapter) vs the SDK's client directly.

Both call `get_current_time` on the reference `mcp-server-time` server over stdio. Goal: ≤ 1.2×.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.report import Figure, Report, median_us, time_async
from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover
from toolgate.mcp.manager import McpManager
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

ROUNDS = 200
SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
ARGS = {"timezone": "Europe/Berlin"}


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


async def _direct() -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()

        async def once() -> None:
            result = await session.call_tool("get_current_time", ARGS)
            assert not result.is_error

        return await time_async(once, ROUNDS, warmup=10)


async def _through_toolgate(workdir: Path) -> list[float]:
    config = workdir / "config"
    (config / "toolgate").mkdir(parents=True)
    (config / "toolgate" / "settings.json").write_text(json.dumps({"mcpServers": {"time": SERVER}}))
    environ = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    options = {"data_dir": workdir / "data", "home": workdir, "environ": environ}
    first = McpManager(workdir, **options)  # type: ignore[arg-type]
    server = first.server("time")
    assert server is not None
    first.store.approve(server)
    async with McpManager(workdir, **options) as manager:  # type: ignore[arg-type]
        await manager.start()
        runtime = build_runtime(
            workdir,
            NonInteractiveApprover(),
            RuntimeOptions(
                read_settings=False, rules={"allow": ["mcp__time"]}, tools=[*builtin_tools(), *manager.tools()]
            ),
        )
        counter = iter(range(10**9))

        async def once() -> None:
            use = ToolUse(id=f"t{next(counter)}", name="mcp__time__get_current_time", input=ARGS)
            [result] = await runtime.orchestrator.run_turn([use])
            assert not result.is_error, result

        try:
            return await time_async(once, ROUNDS, warmup=10)
        finally:
            await runtime.aclose()


async def _run(report: Report, workdir: Path) -> None:
    direct = await _direct()
    through = await _through_toolgate(workdir)
    report.add(
        Figure(
            "mcp",
            "MCP tool round trip through toolgate (mcp-server-time)",
            median_us(through),
            "µs",
            "the SDK's client calling the same server directly",
            median_us(direct),
            note="goal ≤ 1.2×",
        )
    )
