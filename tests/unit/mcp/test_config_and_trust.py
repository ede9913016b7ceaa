"""Which servers may start: trust, approval, bad settings; names; the CLI that approves."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolgate.mcp.approvals import ApprovalStore
from toolgate.mcp.config import parse_servers
from toolgate.mcp.manager import McpManager
from toolgate.mcp.names import tool_names

from .conftest import McpSetup


def manager_for(setup: McpSetup, trust: bool | None = None) -> McpManager:
    return McpManager(
        setup.workspace, data_dir=setup.data, home=setup.home, environ=setup.environ, trust_workspace=trust
    )


async def test_a_workspace_server_in_an_untrusted_workspace_never_starts(mcp_setup: McpSetup) -> None:
    mcp_setup.workspace_servers({"repo": mcp_setup.edge()})
    manager = manager_for(mcp_setup)
    server = manager.server("repo")
    assert server is not None and server.scope == "workspace"
    ApprovalStore(manager.directory).approve(server)  # even approved, the workspace's trust comes first
    async with manager_for(mcp_setup) as untrusted:
        await untrusted.start()
        [status] = untrusted.status()
        assert status.state == "blocked-untrusted" and "toolgate trust" in status.reason
        assert untrusted.tools() == []
    assert not mcp_setup.pidfile.exists(), "a process was spawned"


async def test_a_trusted_workspace_server_starts_once_approved(mcp_setup: McpSetup) -> None:
    mcp_setup.workspace_servers({"repo": mcp_setup.edge()})
    async with manager_for(mcp_setup, trust=True) as manager:
        await manager.start()
        assert manager.status()[0].state == "needs-approval"
    assert not mcp_setup.pidfile.exists()
    manager = manager_for(mcp_setup, trust=True)
    server = manager.server("repo")
    assert server is not None
    ApprovalStore(manager.directory).approve(server)
    async with manager_for(mcp_setup, trust=True) as manager:
        await manager.start()
        assert manager.status()[0].state == "running"
    assert len(mcp_setup.started_pids()) == 1


async def test_changing_a_servers_command_needs_a_new_approval(mcp_setup: McpSetup) -> None:
    mcp_setup.user_servers({"edge": mcp_setup.edge()})
    manager = manager_for(mcp_setup)
    server = manager.server("edge")
    assert server is not None
    manager.store.approve(server)
    mcp_setup.user_servers({"edge": mcp_setup.edge("--hang-initialize")})
    changed = manager_for(mcp_setup)
    server = changed.server("edge")
    assert server is not None and changed.store.get(server) is None
    assert changed.may_start(server)[1] == "needs-approval"


def test_workspace_servers_do_not_replace_user_servers_and_bad_entries_are_reported(mcp_setup: McpSetup) -> None:
    mcp_setup.user_servers({"same": mcp_setup.edge()})
    mcp_setup.workspace_servers({"same": {"command": "evil"}, "broken": {"type": "http", "url": "ftp://x"}})
    manager = manager_for(mcp_setup)
    [server] = manager.listing.servers
    assert server.scope == "user"
    assert any("also in your user settings" in p for p in manager.listing.problems)
    assert any("'broken'" in p and "url" in p for p in manager.listing.problems)


def test_parse_servers_reads_claude_codes_shape(tmp_path: Path) -> None:
    text = json.dumps(
        {
            "mcpServers": {
                "a": {"command": "x", "args": ["1"], "env": {"K": "v"}},
                "b": {"type": "http", "url": "https://h/mcp", "headers": {"X": "y"}},
                "c": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
                "d": {"type": "websocket", "url": "ws://h"},
            }
        }
    )
    servers, problems = parse_servers(text, tmp_path / ".mcp.json", "workspace")
    assert [s.config.type for s in servers] == ["stdio", "http", "sse"]
    [unknown] = problems
    assert "server 'd'" in unknown and "not used until fixed" in unknown
    _, problems = parse_servers("{not json", tmp_path / ".mcp.json", "workspace")
    assert "not valid JSON" in problems[0]


def test_names_are_sanitised_and_collisions_resolved_the_same_way_every_time() -> None:
    names = tool_names("my server", ["a.b", "a_b", "ok", "x" * 80])
    assert names["ok"] == "mcp__my_server__ok"
    assert names["a.b"] != names["a_b"] and names["a.b"].startswith("mcp__my_server__a_b_")
    assert all(len(n) <= 64 and n.replace("_", "").replace("-", "").isalnum() for n in names.values())
    assert tool_names("my server", ["x" * 80, "a_b", "ok", "a.b"]) == names
    assert tool_names("a__b", ["t"])["t"] == "mcp__a_b__t"


def test_the_cli_approves_lists_and_shows_the_diff(mcp_setup: McpSetup) -> None:
    mcp_setup.user_servers({"edge": mcp_setup.edge()})
    environ = {**mcp_setup.environ, "XDG_DATA_HOME": str(mcp_setup.root / "xdg")}
    base = [sys.executable, "-m", "toolgate", "mcp"]
    where = ["--workspace", str(mcp_setup.workspace)]

    def run(*args: str) -> str:
        done = subprocess.run([*base, *args, *where], env=environ, capture_output=True, text=True, check=True)
        return done.stdout

    assert "needs-approval" in run("list")
    assert "Approved MCP server 'edge'" in run("approve", "edge")
    assert json.loads(run("list", "--json"))[0]["may_start"] is True
    assert "no change" in run("diff", "edge")
    assert "withdrawn" in run("revoke", "edge")
    assert not mcp_setup.pidfile.exists()
    assert os.path.exists(mcp_setup.root / "xdg" / "toolgate" / "mcp" / "approvals.json")


def test_run_tools_with_mcp_offers_approved_servers_and_leaves_out_denied_tools(mcp_setup: McpSetup) -> None:
    mcp_setup.user_servers({"edge": mcp_setup.edge()})
    environ = {**mcp_setup.environ, "XDG_DATA_HOME": str(mcp_setup.root / "xdg")}
    where = ["--workspace", str(mcp_setup.workspace)]
    toolgate = [sys.executable, "-m", "toolgate"]
    subprocess.run([*toolgate, "mcp", "approve", "edge", *where], env=environ, check=True, capture_output=True)
    calls = [
        {"type": "tool_use", "id": "1", "name": "mcp__edge__echo", "input": {"text": "over stdio"}},
        {"type": "tool_use", "id": "2", "name": "mcp__edge__fail", "input": {}},
    ]
    done = subprocess.run(
        [*toolgate, "run-tools", "--mcp", "--allow", "mcp__edge", "--deny", "mcp__edge__fail", *where],
        input="\n".join(json.dumps(c) for c in calls) + "\n",
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    echo, fail = (json.loads(line) for line in done.stdout.splitlines())
    assert echo["content"] == "over stdio" and not echo["is_error"]
    assert fail["is_error"] and 'kind="unknown_tool"' in fail["content"]
    available = fail["content"].split("The tools available are:")[1]
    assert "mcp__edge__echo" in available and "mcp__edge__fail" not in available
    [pid] = mcp_setup.started_pids()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 0)
        raise AssertionError("the MCP server outlived run-tools")


def test_adopting_another_store_keeps_this_stores_approvals_and_an_unreadable_file_loses_nothing(
    mcp_setup: McpSetup, caplog: pytest.LogCaptureFixture
) -> None:
    mcp_setup.user_servers({"edge": mcp_setup.edge(), "other": mcp_setup.edge("--x")})
    old_dir, shared_dir = mcp_setup.root / "old", mcp_setup.root / "shared"
    manager = manager_for(mcp_setup)
    edge, other = manager.server("edge"), manager.server("other")
    assert edge is not None and other is not None
    old, shared = ApprovalStore(old_dir), ApprovalStore(shared_dir)
    old.approve(edge)
    old.approve(other)
    shared.approve(edge)
    assert shared.pin(edge, {"echo": {"description": "pinned here"}})
    assert shared.adopt(old) == 1  # only `other` was missing
    assert shared.get(other) is not None
    assert shared.load().servers[edge.key].snapshot == {"echo": {"description": "pinned here"}}
    assert not old.path.exists() and (old_dir / "approvals.json.adopted").exists()
    assert shared.adopt(old) == 0  # once

    broken = ApprovalStore(mcp_setup.root / "broken")
    broken.path.parent.mkdir()
    broken.path.write_text("{not json")
    assert ApprovalStore(mcp_setup.root / "fresh").adopt(broken) == 0
    assert broken.path.read_text() == "{not json"  # left for the person to look at
    assert "MCP approvals not moved" in caplog.text and str(broken.path) in caplog.text
