"""A real VS Code for tests and demos: code-server on 127.0.0.1 with the toolgate extension installed.

Everything it writes stays under one private directory (HOME, TMPDIR, XDG_* dirs, user data, extensions, the
workspace copy). It runs in its own process group, and `stop()` kills the group; every process it started carries
a marker in its environment, so anything that escaped the group is found and killed too, and reported.

`launcher.py` beside it uses this to start the product for a person (`make run`, `make demo`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CODE_SERVER = REPO / ".cache" / "code-server" / "node_modules" / ".bin" / "code-server"
VENV_PYTHON = REPO / ".venv" / "bin" / "python"
DEMO_WORKSPACE = REPO / "examples" / "demo-workspace"
EXTENSION_ID = "toolgate.toolgate"

# The recipe's settings: no trust prompt, no welcome page, nothing phoning home.
BASE_SETTINGS: dict[str, Any] = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "extensions.ignoreRecommendations": True,
    "chat.commandCenter.enabled": False,
    # The sidecar runs on the project's .venv (toolgate installed in editable mode), not on an environment built
    # from it: test_python_env.py turns this off to test that environment.
    "toolgate.python.useInterpreterDirectly": True,
}

ENV_MARKER = "TOOLGATE_E2E_INSTANCE"


def vsix_path() -> Path:
    version = json.loads((REPO / "extension" / "package.json").read_text())["version"]
    return REPO / f"toolgate-{version}.vsix"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    """Poll `condition` until it holds; fail with `what` when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def processes_with_marker(marker: str) -> list[int]:
    """Pids of the processes whose environment carries our marker (ours, in or out of the process group)."""
    needle = f"{ENV_MARKER}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


class CodeServer:
    def __init__(
        self,
        root: Path,
        *,
        settings: dict[str, Any] | None = None,
        port: int | None = None,
        inherit_api_keys: bool = False,
    ) -> None:
        self.root = root
        # Keys in our environment reach the editor (and so the sidecar) only when asked for: tests keep them out.
        self.inherit_api_keys = inherit_api_keys
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.user_data = root / "user-data"
        self.extensions = root / "extensions"
        self.workspace = root / "workspace"
        self.log_path = root / "code-server.log"
        self.settings_path = self.user_data / "User" / "settings.json"
        # A marker set by whoever started us (a test watching a launcher) is kept, so that it can find our processes.
        self.marker = os.environ.get(ENV_MARKER) or uuid.uuid4().hex
        self.process: subprocess.Popen[bytes] | None = None
        self.leaked: list[int] = []
        for directory in ("home", "tmp", "xdg/config", "xdg/data", "xdg/cache", "user-data/User", "extensions"):
            (root / directory).mkdir(parents=True, exist_ok=True)
        self.write_settings({**BASE_SETTINGS, **(settings or {})})

    @property
    def env(self) -> dict[str, str]:
        # Keep the host's own editor or agent settings out of the private instance.
        private = ("VSCODE_", "XDG_", "PYTEST_") + (() if self.inherit_api_keys else ("ANTHROPIC_", "OPENAI_"))
        env = {key: value for key, value in os.environ.items() if not key.startswith(private)}
        # code-server listens on $PORT rather than on --bind-addr's port when it is set (`make run PORT=…` sets it).
        env.pop("PORT", None)
        env.update(
            HOME=str(self.root / "home"),
            TMPDIR=str(self.root / "tmp"),
            XDG_CONFIG_HOME=str(self.root / "xdg" / "config"),
            XDG_DATA_HOME=str(self.root / "xdg" / "data"),
            XDG_CACHE_HOME=str(self.root / "xdg" / "cache"),
            **{ENV_MARKER: self.marker},
        )
        return env

    def write_settings(self, settings: dict[str, Any]) -> None:
        """The user settings, read at start. (code-server does not notice later edits of this file.)"""
        self.settings_path.write_text(json.dumps(settings, indent=2))

    def write_workspace_settings(self, settings: dict[str, Any] | None) -> None:
        """Set (or, with None, remove) the workspace's .vscode/settings.json; the running editor applies it."""
        path = self.workspace / ".vscode" / "settings.json"
        if settings is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(settings, indent=2))

    def copy_workspace(self, source: Path) -> Path:
        shutil.copytree(source, self.workspace, dirs_exist_ok=True)
        return self.workspace

    def _command(self, *args: str) -> list[str]:
        if not CODE_SERVER.exists():
            raise FileNotFoundError(f"{CODE_SERVER} is missing: run `make e2e-setup` (scripts/setup-e2e.sh) first")
        return [
            str(CODE_SERVER),
            "--user-data-dir",
            str(self.user_data),
            "--extensions-dir",
            str(self.extensions),
            *args,
        ]

    def install_extension(self, vsix: Path) -> None:
        if not vsix.exists():
            raise FileNotFoundError(f"{vsix} is missing: run `make vsix` first")
        result = subprocess.run(
            self._command("--install-extension", str(vsix), "--force"),
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,
            check=False,
        )
        installed = any(entry.name.startswith(f"{EXTENSION_ID}-") for entry in self.extensions.iterdir())
        if result.returncode != 0 or not installed:
            raise RuntimeError(f"installing {vsix.name} failed:\n{result.stdout}\n{result.stderr}")

    def start(self, timeout: float = 60) -> str:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self._command(
                "--auth",
                "none",
                "--bind-addr",
                f"127.0.0.1:{self.port}",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                str(self.workspace),
            ),
            env=self.env,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() kills all of it
        )
        log.close()
        wait_for(self._healthy, timeout, f"code-server to answer on {self.url}healthz (log: {self.log_path})")
        return self.url

    def _healthy(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"code-server exited with {self.process.returncode}:\n{self.log_tail()}")
        try:
            with urllib.request.urlopen(f"{self.url}healthz", timeout=1) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def output_log(self, channel: str) -> str:
        """What an extension wrote to its output channel (VS Code keeps a file per channel and window)."""
        logs = sorted(self.user_data.glob(f"logs/*/exthost*/output_logging_*/*-{channel}.log"))
        return "\n".join(path.read_text(errors="replace") for path in logs)

    def processes(self) -> list[int]:
        return processes_with_marker(self.marker)

    def stop(self) -> None:
        """Kill the whole process group (extension hosts and sidecars outlive the browser), then any stragglers."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            with contextlib.suppress(TimeoutError):
                wait_for(lambda: not self._group_alive(), 5, "the process group to exit")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        # The sidecar's watchdog runs in its own session and may still be ending MCP servers' process groups (TERM,
        # up to two seconds, then KILL): what is still there five seconds on is a leak.
        with contextlib.suppress(TimeoutError):
            wait_for(lambda: not self.processes(), 5, "the watchdog to end the sidecar's process groups")
        self.leaked = self.processes()
        for pid in self.leaked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _group_alive(self) -> bool:
        assert self.process is not None
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        return True


@contextlib.contextmanager
def running(
    root: Path,
    *,
    settings: dict[str, Any] | None = None,
    port: int | None = None,
    inherit_api_keys: bool = False,
    server_type: type[CodeServer] = CodeServer,
    workspace_files: dict[str, str] | None = None,
) -> Iterator[CodeServer]:
    """code-server with the extension from `make vsix`, on a copy of the demo workspace (plus `workspace_files`,
    relative path → text); stopped (all of it) after."""
    server = server_type(root, settings=settings, port=port, inherit_api_keys=inherit_api_keys)
    server.copy_workspace(DEMO_WORKSPACE)
    for relative, text in (workspace_files or {}).items():
        (server.workspace / relative).parent.mkdir(parents=True, exist_ok=True)
        (server.workspace / relative).write_text(text, encoding="utf-8")
    server.install_extension(vsix_path())
    try:
        server.start()
        yield server
    finally:
        server.stop()
