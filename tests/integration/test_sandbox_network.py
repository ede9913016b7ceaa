"""The network allow-list, end to end: real Bash calls through `toolgate run-tools --sandbox on` reaching (or not)
an HTTP server this test starts on 127.0.0.1, through the session's egress proxy and the in-sandbox forwarder.

The proxy's host tricks are sent as raw requests from inside the sandbox (python3 socket to the forwarder on
the sandbox's own 127.0.0.1:3128), so nothing in between (curl's URL parser) can clean them up first.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.recording_server import RecordingServer, recording_server
from tests.integration.test_run_tools_cli import tool_use
from tests.integration.test_sandbox_escapes import _processes_with, bash_call, python, run_one, run_tools

from toolgate.sandbox.runtime import PROXY_PORT

REPLY = "hello from the test's server"


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server(lambda _path: REPLY.encode()) as running:
        yield running


def settings(tmp_path: Path, *rules: str) -> list[str]:
    path = tmp_path / "net-settings.json"
    path.write_text(json.dumps({"sandbox": {"network": list(rules)}}))
    return ["--settings", str(path), "--allow", "Bash(curl *)"]


def curl(url: str) -> str:
    return f"curl -sS --max-time 10 {shlex.quote(url)}"


def raw_request(head: str) -> str:
    """A python3 program that sends `head` to the forwarder as it is and prints the status line it gets."""
    code = f"""
import socket
s = socket.create_connection(('127.0.0.1', {PROXY_PORT}), timeout=10)
s.sendall({head.encode("latin-1")!r})
print('STATUS', s.recv(65536).split(b'\\r\\n')[0].decode())
"""
    return python(code)


def test_without_a_rule_curl_reaches_nothing(workspace: Path, tmp_path: Path, server: RecordingServer) -> None:
    result = run_one(workspace, curl(f"http://127.0.0.1:{server.port}/"), *settings(tmp_path))
    assert "needs approval" not in result, result
    assert REPLY not in result and server.paths == []


def test_a_rule_naming_the_loopback_address_exactly_reaches_it_through_the_proxy(
    workspace: Path, tmp_path: Path, server: RecordingServer
) -> None:
    args = settings(tmp_path, "Network(domain:127.0.0.1)")
    url = f"http://127.0.0.1:{server.port}/via-curl"
    urllib = python(f"import urllib.request; print(urllib.request.urlopen({url + '-py'!r}, timeout=10).read())")
    direct = python(
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {server.port}), timeout=3)\n"
        "    print('CONNECTED')\nexcept OSError as e:\n    print('refused', e)"
    )
    results = run_tools(workspace, [bash_call(curl(url)), bash_call(urllib), bash_call(direct)], *args)
    assert results[0] == REPLY, results
    assert REPLY in results[1], results
    assert "refused" in results[2] and "CONNECTED" not in results[2]  # a socket skips the proxy: no way out
    assert server.paths == ["/via-curl", "/via-curl-py"]


def test_an_unlisted_host_gets_a_403_naming_the_rule_and_the_result_says_so(workspace: Path, tmp_path: Path) -> None:
    result = run_one(workspace, curl("http://evil.test/x"), *settings(tmp_path, "Network(domain:127.0.0.1)"))
    assert "toolgate's sandbox refused evil.test:80" in result, result
    assert "The sandbox's network proxy refused 1 connection(s): evil.test:80" in result
    assert "Network(domain:evil.test) would allow it" in result


@pytest.mark.parametrize(
    ("authority", "status"),
    [
        ("localhost\x00.evil.test:{port}", "400"),
        ("localhost%00.evil.test:{port}", "400"),
        ("localhost@evil.test:{port}", "400"),
        ("evil.test.:{port}", "403"),
        ("127.0.0.1:{port}", "403"),  # the rule names localhost, not the address
        ("LOCALHOST:{port}", "200"),
        ("localhost.:{port}", "200"),
    ],
)
def test_proxy_host_tricks(
    workspace: Path, tmp_path: Path, server: RecordingServer, authority: str, status: str
) -> None:
    target = authority.format(port=server.port)
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
    result = run_one(workspace, raw_request(head), *settings(tmp_path, "Network(domain:localhost)"))
    assert f"STATUS HTTP/1.1 {status}" in result, result
    if status != "200":
        assert "The sandbox's network proxy refused 1 connection(s)" in result


def test_background_commands_reach_only_through_the_proxy_and_nothing_is_left_running(
    workspace: Path, tmp_path: Path, server: RecordingServer
) -> None:
    url = f"http://127.0.0.1:{server.port}/background"
    start = bash_call(f"{curl(url)} > got.txt; {curl('http://evil.test/')} > refused.txt", run_in_background=True)
    wait = bash_call("until [ -s refused.txt ]; do sleep 0.05; done; cat got.txt", timeout=30_000)
    results = run_tools(workspace, [start, wait], *settings(tmp_path, "Network(domain:127.0.0.1)"))
    assert results[1] == REPLY, results
    assert "Network(domain:evil.test)" in (workspace / "refused.txt").read_text()
    assert server.paths == ["/background"]
    assert _processes_with("toolgate-egress-") == []  # the forwarder died with its sandbox, the proxy with the session


def test_a_background_commands_refusals_are_reported_by_bash_output(workspace: Path, tmp_path: Path) -> None:
    start = bash_call(f"{curl('http://evil.test/')} > refused.txt", run_in_background=True)
    wait = bash_call("until [ -s refused.txt ]; do sleep 0.05; done", timeout=30_000)
    read = tool_use("out1", "BashOutput", id="bash_1")
    again = tool_use("out2", "BashOutput", id="bash_1")
    results = run_tools(workspace, [start, wait, read, again], *settings(tmp_path, "Network(domain:127.0.0.1)"))
    assert "The sandbox's network proxy refused 1 connection(s): evil.test:80" in results[2], results
    assert "Network(domain:evil.test) would allow it" in results[2]
    assert "refused" not in results[3]  # each refusal is reported once
