"""The client against a real third-party server from PyPI: the reference `mcp-server-time`."""

from __future__ import annotations

import json
import sys

from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

from .conftest import McpSetup


async def test_get_current_time_through_toolgate(mcp_setup: McpSetup) -> None:
    server = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    mcp_setup.user_servers({"time": server})
    mcp_setup.approve("time")
    async with mcp_setup.manager() as manager:
        await manager.start()
        names = [t.name for t in manager.tools()]
        assert names == ["mcp__time__convert_time", "mcp__time__get_current_time"]
        runtime = build_runtime(
            mcp_setup.workspace,
            NonInteractiveApprover(),
            RuntimeOptions(
                read_settings=False,
                rules={"allow": ["mcp__time__get_current_time"]},
                tools=[*builtin_tools(), *manager.tools()],
            ),
        )
        [now] = await runtime.orchestrator.run_turn(
            [ToolUse(id="1", name="mcp__time__get_current_time", input={"timezone": "Europe/Berlin"})]
        )
        assert not now.is_error, now.content
        assert json.loads(now.content)["timezone"] == "Europe/Berlin"
        [convert] = await runtime.orchestrator.run_turn(
            [
                ToolUse(
                    id="2",
                    name="mcp__time__convert_time",
                    input={"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
                )
            ]
        )
        assert convert.is_error and 'kind="permission"' in convert.content  # only get_current_time is allowed
        await runtime.aclose()
