"""The client over Streamable HTTP, against the edge server listening on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

from .conftest import EDGE_SERVER, McpSetup


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[int]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(EDGE_SERVER), "--http-port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:  # wait until it accepts connections (or give up with its exit status)
            assert process.poll() is None, f"the edge server exited with {process.returncode}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the edge server did not listen within 30 s"
                time.sleep(0.05)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


async def test_a_streamable_http_server(mcp_setup: McpSetup, http_server: int) -> None:
    url = f"http://127.0.0.1:{http_server}/mcp"
    mcp_setup.user_servers({"web": {"type": "http", "url": url, "headers": {"X-Test": "1"}}})
    mcp_setup.approve("web")
    async with mcp_setup.manager() as manager:
        await manager.start()
        assert manager.status()[0].state == "running", manager.status()
        runtime = build_runtime(
            mcp_setup.workspace,
            NonInteractiveApprover(),
            RuntimeOptions(
                read_settings=False, rules={"allow": ["mcp__web"]}, tools=[*builtin_tools(), *manager.tools()]
            ),
        )
        [result] = await runtime.orchestrator.run_turn(
            [ToolUse(id="1", name="mcp__web__echo", input={"text": "over http"})]
        )
        assert not result.is_error and result.content == "over http"
        await runtime.aclose()
