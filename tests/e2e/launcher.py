"""What `make run` and `make demo` start: toolgate in a real VS Code (code-server on 127.0.0.1) on a fresh copy of
examples/demo-workspace, until Ctrl-C.

    python tests/e2e/launcher.py [--port N] [--demo [--script FILE]]

`--demo` also starts the local mock model (`python -m toolgate.mockmodel`, on a free 127.0.0.1 port) playing
examples/demo-chat.json, and points the chat at it. Without it the chat uses the provider the person configures (an
API key in the environment this starts from is passed on). Everything lives in one temporary directory, removed at
the end; every process started here runs in its own process group and is stopped with it, and the end-to-end tests
start the demo through this very module (tests/e2e/test_demo.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: codeserver.py sits beside us

from codeserver import REPO, VENV_PYTHON, CodeServer, free_port, running

DEMO_SCRIPT = REPO / "examples" / "demo-chat.json"
DEFAULT_PORT = 8080
DEMO_MODEL = "scripted-demo"  # the mock answers whatever model is asked for; this name tells the person what it is


class MockModelProcess:
    """`python -m toolgate.mockmodel` in its own process group, playing a script; `stop()` ends the group."""

    def __init__(self, script: Path, *, record: Path | None = None, env: dict[str, str] | None = None) -> None:
        command = [str(VENV_PYTHON), "-m", "toolgate.mockmodel", "--script", str(script)]
        if record is not None:
            command += ["--record", str(record)]
        self.record = record
        self.process = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, killed by stop()
        )
        assert self.process.stdout is not None
        try:
            line = self.process.stdout.readline()  # printed once it listens; "" if it died first
        except BaseException:  # Ctrl-C while it starts
            self.stop()
            raise
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"the mock model did not start (it said {line!r}; exit status {self.process.poll()})")
        self.url = line.removeprefix("listening on ").strip()

    def requests(self) -> list[dict[str, Any]]:
        if self.record is None or not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


def product_settings() -> dict[str, Any]:
    """The user settings of `make run` (and of the end-to-end tests' editor): the sidecar runs on the project's venv."""
    return {"toolgate.python.path": str(VENV_PYTHON)}


def demo_settings(mock_url: str) -> dict[str, Any]:
    """`make demo`: the chat talks to the mock model, an OpenAI-compatible server that needs no key."""
    return {
        **product_settings(),
        "toolgate.provider": "openai",
        "toolgate.baseUrl": f"{mock_url}/v1",
        "toolgate.model": DEMO_MODEL,
    }


# The demo walks the person through an approval card. The sandbox's autoAllow (on by default) would run its
# `python3 src/greet.py` without asking, since the command only writes inside the workspace: the demo's copy of the
# workspace turns it off in its local settings (a workspace may turn autoAllow off, never on).
DEMO_WORKSPACE_FILES = {".toolgate/settings.local.json": '{"sandbox": {"autoAllow": false}}\n'}


@dataclass
class Launched:
    server: CodeServer
    mock: MockModelProcess | None


@contextlib.contextmanager
def launch(root: Path, *, port: int | None = None, demo_script: Path | None = None) -> Iterator[Launched]:
    """Start the product (and, for the demo, the mock model) under `root`; stop every process on the way out."""
    mock = MockModelProcess(demo_script) if demo_script is not None else None
    try:
        settings = demo_settings(mock.url) if mock is not None else product_settings()
        # A person's own API key (ANTHROPIC_API_KEY, OPENAI_API_KEY) is welcome in `make run`; the demo needs none.
        files = DEMO_WORKSPACE_FILES if mock is not None else None
        with running(
            root, settings=settings, port=port, inherit_api_keys=mock is None, workspace_files=files
        ) as server:
            try:
                yield Launched(server, mock)
            finally:
                if mock is not None:
                    mock.stop()  # before code-server's stop, which reports any process it finds still running
    finally:
        if mock is not None:
            mock.stop()


def choose_port(requested: int | None) -> int:
    """The port asked for; by default 8080, or any free port when 8080 is taken (say, by another editor)."""
    if requested is not None:
        return requested or free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", DEFAULT_PORT))
        except OSError:
            return free_port()
    return DEFAULT_PORT


def describe(launched: Launched, demo_script: Path | None) -> str:
    server = launched.server
    lines = [
        f"toolgate is running in code-server: {server.url}",
        f"  workspace: {server.workspace}",
        "             (a fresh copy of examples/demo-workspace, removed when this stops)",
    ]
    if launched.mock is not None and demo_script is not None:
        lines += [
            f"  model:     the mock model at {launched.mock.url}, playing {display(demo_script)}",
            "",
            "Open the URL, click the toolgate icon in the activity bar and send any message: the scripted session",
            "plans, reads, searches, asks before it runs a command and shows its edit as a diff for you to review.",
        ]
    else:
        keys = [name for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY") if os.environ.get(name)]
        lines += [
            f"  model:     {' and '.join(keys)} from this environment"
            if keys
            else "  model:     none yet: the chat panel says how to connect one (or try `make demo`, no key needed)",
            "",
            "Open the URL and click the toolgate icon in the activity bar.",
        ]
    lines.append("Ctrl-C stops everything.")
    return "\n".join(lines)


def display(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(REPO))
    return str(path)


def _interrupt_once(signum: int, frame: object) -> None:
    # The first Ctrl-C (or kill, or a closed terminal) starts the cleanup; further ones must not cut it short.
    for other in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(other, signal.SIG_IGN)
    print("\nStopping toolgate…", flush=True)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Start toolgate in code-server on a copy of the demo workspace.")
    parser.add_argument(
        "--port", type=int, default=None, help=f"port on 127.0.0.1 (default {DEFAULT_PORT} if free; 0: any)"
    )
    parser.add_argument("--demo", action="store_true", help="connect the chat to the local mock model playing a script")
    parser.add_argument("--script", type=Path, default=DEMO_SCRIPT, help="the demo's script (default: %(default)s)")
    args = parser.parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt_once)
    demo_script = args.script.resolve() if args.demo else None
    root = Path(tempfile.mkdtemp(prefix="toolgate-demo-" if args.demo else "toolgate-run-"))
    status = 0
    started: list[Launched] = []
    try:
        with launch(root, port=choose_port(args.port), demo_script=demo_script) as launched:
            started.append(launched)
            print(describe(launched, demo_script), flush=True)
            process = launched.server.process
            while process is not None and process.poll() is None:
                time.sleep(0.5)
            print(f"code-server exited by itself (status {process.returncode if process else '?'}); its log ends:")
            print(launched.server.log_tail(), flush=True)
            status = 1
    except KeyboardInterrupt:
        pass
    finally:
        shutil.rmtree(root, ignore_errors=True)
    leaked = [pid for launched in started for pid in launched.server.leaked]
    if leaked:
        print(f"Stopped; these processes had escaped code-server's process group and were killed: {leaked}")
    else:
        print("Stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
