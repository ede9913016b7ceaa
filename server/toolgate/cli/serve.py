"""`toolgate serve`: the sidecar over stdio (LSP base-protocol framing, JSON-RPC 2.0)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import BinaryIO, NoReturn

from toolgate.sidecar.server import ToolgateServer


def reserve_stdout() -> BinaryIO:
    """Keep the real stdout for JSON-RPC alone: anything else that writes to fd 1 (a stray print, a child
    process that inherits it) lands on stderr instead of corrupting the message stream."""
    sys.stdout.flush()
    rpc = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return rpc


def run_server(server: ToolgateServer) -> NoReturn:
    rpc_out = reserve_stdout()
    loop = asyncio.new_event_loop()
    log = logging.getLogger("toolgate.sidecar")
    try:
        status = loop.run_until_complete(server.serve_stdio(sys.stdin.buffer, rpc_out))
    except BaseException:
        log.exception("the sidecar failed")
        status = 1
    log.info("exiting with status %d", status)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):  # stdout is stderr's fd by now; flush what a stray print left
        stream.flush()
    # Sessions are closed by now. A tool thread stuck in a system call must not keep the process alive
    # after its client has gone, so leave without waiting for threads.
    os._exit(status)


def serve_command(args: argparse.Namespace) -> int:
    # The editor's output channel shows MCP servers' stderr (with their names) whatever the log level.
    logging.getLogger("toolgate.mcp.stderr").setLevel(min(logging.INFO, logging.getLogger().level))
    run_server(ToolgateServer(data_root=args.data_dir, trust_workspaces=args.trust_workspace))
