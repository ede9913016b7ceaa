"""`toolgate mcp list|approve|revoke|diff|serve`: MCP servers, headless.

`list`, `approve`, `revoke` and `diff` never start a server: approving is a decision about the settings (the
command and its arguments, env, URL) and, after a change, about the new tool list the last start recorded.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from toolgate.cli.errors import UsageError
from toolgate.mcp.approvals import ApprovalError, approval_summary
from toolgate.mcp.config import ConfiguredServer
from toolgate.mcp.manager import McpManager
from toolgate.mcp.pinning import changed_tools, snapshot_diff
from toolgate.mcp.session import McpOptions
from toolgate.runtime import Runtime


def _manager(args: argparse.Namespace) -> McpManager:
    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    return McpManager(
        workspace, data_dir=args.data_dir, environ=os.environ, trust_workspace=args.trust_workspace or None
    )


def _server(manager: McpManager, name: str) -> ConfiguredServer:
    server = manager.server(name)
    if server is None:
        known = ", ".join(s.name for s in manager.listing.servers) or "none"
        raise UsageError(f"no MCP server is named {name!r} (configured: {known})")
    return server


async def start_mcp_servers(runtime: Runtime, args: argparse.Namespace) -> None:
    """Start the approved MCP servers for a headless session and offer their tools (the same way a chat session
    does: toolgate.mcp.session); they stop when the runtime closes. Problems go to stderr."""
    data_dir = args.data_dir.expanduser().resolve() if args.data_dir else None
    servers = runtime.attach_mcp(McpOptions(data_dir=data_dir, trust_workspace=args.trust_workspace or None))
    await servers.ensure_started()


def mcp_command(args: argparse.Namespace) -> int:
    if args.action == "serve":
        from toolgate.cli.mcp_serve import mcp_serve_command

        return mcp_serve_command(args)
    manager = _manager(args)
    for problem in manager.listing.problems:
        print(f"warning: {problem}")
    try:
        if args.action == "list":
            return _list(manager, args.json)
        server = _server(manager, args.name)
        if args.action == "approve":
            approved = manager.store.approve(server)
            note = "" if approved.tools is None else " with the tool list it last answered with"
            print(f"Approved MCP server {server.name!r}{note}.")
            allowed, _state, reason = manager.may_start(server)
            if not allowed:
                print(f"It still does not start: {reason}.")
            return 0
        if args.action == "revoke":
            done = manager.store.revoke(server)
            print(f"{server.name!r}: " + ("approval withdrawn." if done else "was not approved; nothing changed."))
            return 0
        approval = manager.store.load().servers.get(server.key)
        if approval is None or approval.pending is None:
            print(f"{server.name!r}: no change to its tools is waiting for approval.")
            return 0
        pinned = approval.snapshot or {}
        print("Changed tools: " + ", ".join(changed_tools(pinned, approval.pending)))
        print(snapshot_diff(pinned, approval.pending), end="")
        return 0
    except ApprovalError as exc:
        raise UsageError(str(exc)) from None


def _list(manager: McpManager, as_json: bool) -> int:
    rows = []
    for server in manager.listing.servers:
        allowed, state, reason = manager.may_start(server)
        try:
            summary = approval_summary(manager.store.load().servers.get(server.key))
        except ApprovalError:
            summary = {"approved": False}
        rows.append(
            {"name": server.name, "scope": server.scope, "source": str(server.source), "may_start": allowed,
             "state": state or ("tools-changed" if summary.get("changed") else "approved"), "reason": reason}
        )  # fmt: skip
    if as_json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("No MCP server is configured (mcpServers in your user settings, or the workspace's .mcp.json).")
    for row in [] if as_json else rows:
        print(f"{row['name']}  [{row['scope']}]  {row['state']}" + (f": {row['reason']}" if row["reason"] else ""))
    return 0
