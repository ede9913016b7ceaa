"""`toolgate mcp serve`: the argv side of serving toolgate's tools over MCP stdio (see toolgate.cli.mcp_server)."""

from __future__ import annotations

import argparse

import anyio
from mcp.server.stdio import stdio_server

from toolgate.cli.mcp_server import ElicitingApprover, build_server
from toolgate.cli.options import runtime_from_args


def mcp_serve_command(args: argparse.Namespace) -> int:
    runtime = runtime_from_args(args, ElicitingApprover())
    server = build_server(runtime)

    async def main() -> None:
        try:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            with anyio.CancelScope(shield=True):
                await runtime.aclose()

    anyio.run(main)
    return 0
