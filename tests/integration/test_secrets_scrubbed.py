"""Secrets in the sidecar's environment reach no command: foreground and background Bash and hooks start from
a scrubbed environment (core/child_env.py), and what a command prints is redacted before the model sees it.
Real `toolgate run-tools` subprocess, real bash, bypassPermissions mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FAKE_KEY = "sk-ant-api03-" + "Fake0Key1For2Tests3Only4" * 2
FAKE_OTHER = "plain-looking-secret-value-42"  # no token shape: only the scrub list keeps it out
DUMP = "tr '\\0' '\\n' < /proc/$$/environ; echo; echo DUMPED\n"


def _run(workspace: Path, uses: list[dict[str, Any]], *args: str, env: dict[str, str]) -> list[dict[str, Any]]:
    payload = "".join(json.dumps(use) + "\n" for use in uses)
    proc = subprocess.run(
        [sys.executable, "-m", "toolgate", "run-tools", "--workspace", str(workspace), *args],
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        start_new_session=True,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _bash(id_: str, command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": "Bash", "input": {"command": command, **extra}}


def test_no_child_sees_the_secrets(workspace: Path, tmp_path: Path) -> None:
    (workspace / "dump.sh").write_text(DUMP)
    settings = tmp_path / "hooks.json"
    # Hooks run in the session's sandbox: they write where a Bash command could (the workspace).
    hook = f"tr '\\0' '\\n' < /proc/$$/environ > {workspace / 'hook-env.txt'}"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"command": hook}]}]}}))
    env = {**os.environ, "ANTHROPIC_API_KEY": FAKE_KEY, "MY_SERVICE_TOKEN": FAKE_OTHER}
    out = _run(
        workspace,
        [
            _bash("fg", "bash dump.sh"),
            _bash("bg", "bash dump.sh > bg-env.txt", run_in_background=True),
            _bash("wait", "until grep -q DUMPED bg-env.txt 2>/dev/null; do sleep 0.05; done; echo waited"),
            _bash("asked", "cat /proc/$$/environ"),
        ],
        "--permission-mode",
        "bypassPermissions",
        "--settings",
        str(settings),
        env=env,
    )
    results = {o["tool_use_id"]: o for o in out}
    foreground = results["fg"]["content"]
    assert "DUMPED" in foreground and "HOME=" in foreground  # the dump ran and shows the environment
    assert "waited" in results["wait"]["content"]
    for seen in (foreground, (workspace / "bg-env.txt").read_text(), (workspace / "hook-env.txt").read_text()):
        assert FAKE_KEY not in seen and FAKE_OTHER not in seen
        assert "ANTHROPIC_API_KEY" not in seen and "MY_SERVICE_TOKEN" not in seen
        assert "REDACTED" not in seen  # scrubbed, not merely hidden afterwards
    # Reading a process's environment directly is asked even in bypassPermissions (and refused headless).
    assert results["asked"]["is_error"] and "every mode" in results["asked"]["content"]


def test_env_pass_through_from_the_user_settings_hands_a_variable_on(workspace: Path, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "toolgate").mkdir(parents=True)
    (xdg / "toolgate" / "settings.json").write_text(json.dumps({"env": {"passThrough": ["MY_SERVICE_TOKEN"]}}))
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text(json.dumps({"env": {"passThrough": ["ANTHROPIC_API_KEY"]}}))
    (workspace / "dump.sh").write_text(DUMP)
    env = {**os.environ, "XDG_CONFIG_HOME": str(xdg), "ANTHROPIC_API_KEY": FAKE_KEY, "MY_SERVICE_TOKEN": FAKE_OTHER}
    out = _run(workspace, [_bash("fg", "bash dump.sh")], "--permission-mode", "bypassPermissions", env=env)
    content = out[0]["content"]
    assert "MY_SERVICE_TOKEN=" in content  # handed on, though its value is still redacted from what the model sees
    assert FAKE_OTHER not in content and "REDACTED" in content
    assert "ANTHROPIC_API_KEY" not in content  # a workspace file's passThrough is ignored


def test_a_token_a_command_prints_is_redacted(workspace: Path) -> None:
    token = "ghp_" + "Fake0Token1For2Tests3Only4Abcdefgh"
    (workspace / "notes.txt").write_text(f"deploy with {token}\n")
    out = _run(workspace, [_bash("cat", "cat notes.txt")], env=dict(os.environ))
    content = out[0]["content"]
    assert token not in content
    assert "[REDACTED GitHub token]" in content and "redacted 1 secret value (GitHub token)" in content
