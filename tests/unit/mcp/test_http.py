"""The client over Streamable HTTP and the legacy SSE transport, against the edge server listening on 127.0.0.1."""

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


# type in the settings → the edge server's option and the endpoint's path
TRANSPORTS = {"http": ("--http-port", "/mcp"), "sse": ("--sse-port", "/sse")}


@pytest.fixture(params=sorted(TRANSPORTS))
def http_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(transport type, URL) of the edge server listening on 127.0.0.1 with that transport."""
    kind: str = request.param
    option, path = TRANSPORTS[kind]
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(EDGE_SERVER), option, str(port)],
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
        yield kind, f"http://127.0.0.1:{port}{path}"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


async def test_a_server_over_http(mcp_setup: McpSetup, http_server: tuple[str, str]) -> None:
    kind, url = http_server
    mcp_setup.user_servers({"web": {"type": kind, "url": url, "headers": {"X-Test": "1"}}})
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
        [result, failed] = await runtime.orchestrator.run_turn(
            [
                ToolUse(id="1", name="mcp__web__echo", input={"text": f"over {kind}"}),
                ToolUse(id="2", name="mcp__web__fail", input={}),
            ]
        )
        assert not result.is_error and result.content == f"over {kind}"
        assert failed.is_error and "the widget is out of stock" in str(failed.content)
        await runtime.aclose()
