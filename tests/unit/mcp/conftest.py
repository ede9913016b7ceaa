from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolgate.mcp.manager import McpManager

EDGE_SERVER = Path(__file__).with_name("edge_server.py")


class McpSetup:
    """A home, a user settings file, a data dir and a workspace, all under tmp_path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.config_home = root / "config"
        self.data = root / "data"
        self.workspace = root / "ws"
        for folder in (self.home, self.config_home, self.data, self.workspace):
            folder.mkdir()
        self.pidfile = root / "pids.txt"
        # The default data root, where the CLI without --data-dir and the sidecar keep MCP approvals.
        self.default_data = root / "xdg" / "toolgate"
        self.environ = {
            **os.environ,
            "XDG_CONFIG_HOME": str(self.config_home),
            "XDG_DATA_HOME": str(root / "xdg"),
            "HOME": str(self.home),
        }

    @property
    def user_settings(self) -> Path:
        return self.config_home / "toolgate" / "settings.json"

    def edge(self, *args: str, **extra: Any) -> dict[str, Any]:
        return {"command": sys.executable, "args": [str(EDGE_SERVER), "--pidfile", str(self.pidfile), *args], **extra}

    def user_servers(self, servers: dict[str, Any], **more: Any) -> None:
        self.user_settings.parent.mkdir(parents=True, exist_ok=True)
        self.user_settings.write_text(json.dumps({"mcpServers": servers, **more}))

    def workspace_servers(self, servers: dict[str, Any]) -> None:
        (self.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))

    def manager(self, **options: Any) -> McpManager:
        """A manager over this setup's workspace, home, data dir and environment (`options`: the rest)."""
        return McpManager(self.workspace, data_dir=self.data, home=self.home, environ=self.environ, **options)

    def cli(self, *args: str) -> str:
        """`toolgate mcp ARGS` for this setup's workspace, without --data-dir (the default data root); its output."""
        command = [sys.executable, "-m", "toolgate", "mcp", *args, "--workspace", str(self.workspace)]
        done = subprocess.run(command, env=self.environ, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def approve(self, name: str, data: Path | None = None) -> None:
        """What `toolgate mcp approve NAME` records (under `data`, default this setup's data dir), starting nothing."""
        manager = McpManager(self.workspace, data_dir=data or self.data, home=self.home, environ=self.environ)
        server = manager.server(name)
        assert server is not None, f"no server {name!r} is configured"
        manager.store.approve(server)

    def started_pids(self) -> list[int]:
        return [int(p) for p in self.pidfile.read_text().split()] if self.pidfile.exists() else []


@pytest.fixture
def mcp_setup(tmp_path: Path) -> McpSetup:
    return McpSetup(tmp_path)


@pytest.fixture
def alive() -> Callable[[int], bool]:
    def check(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    return check
