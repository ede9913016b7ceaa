"""The script `make demo` plays (examples/demo-chat.json) against the demo workspace, headless: every step fits the
tools as they are (an Edit whose old_string is gone, a Grep that finds nothing, would spoil the demo), and the
session ends with the closing summary. The editor's side of the demo is tests/e2e/test_demo.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from toolgate.mockmodel import MockModelServer, load_script

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_demo_script_plays_through_on_the_demo_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLES / "demo-workspace", workspace)
    script = load_script(EXAMPLES / "demo-chat.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    with MockModelServer(script) as mock:
        # Nobody is there to approve: bypass lets the command and the edit run, as approving them would.
        command = [sys.executable, "-m", "toolgate", "chat", "--print", "Show me what toolgate does."]
        command += ["--workspace", str(workspace), "--provider", "openai", "--base-url", mock.openai_url]
        command += ["--permission-mode", "bypassPermissions", "--data-dir", str(tmp_path / "data")]
        result = subprocess.run(
            command,
            env={**env, "OPENAI_API_KEY": "unused", "XDG_DATA_HOME": str(tmp_path / "xdg")},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert mock.steps_left == 0
        answered = [request for request in mock.requests if request.status in (None, 200)]
        assert len(answered) == len(script.steps)
    assert result.stdout.startswith("That is the whole demo."), result.stdout
    for shown in ("TodoWrite", "Read src/greet.py", "Grep", "python3 src/greet.py", "Edit src/greet.py"):
        assert shown in result.stderr, result.stderr
    assert "error" not in result.stderr.lower(), result.stderr
    greet = (workspace / "src" / "greet.py").read_text()
    assert 'def greet(name: str = "world") -> str:\n    """Say hello to `name`' in greet
