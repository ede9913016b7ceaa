"""Hooks run in the session's sandbox when it is on: writable where a Bash command is, nowhere else (real bwrap)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.unit.permissions.helpers import fake_tools

from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.sandbox.settings import SandboxRequest
from toolgate.testing import run1


async def _run_read_with_hook(workspace: Path, command: str, sandbox: str) -> None:
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "settings.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    entry = {"matcher": "Read", "hooks": [{"type": "command", "command": command}]}
    user_file.write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    (workspace / "a.txt").write_text("alpha\n")
    options = RuntimeOptions(mode=PermissionMode.DEFAULT, tools=fake_tools(), sandbox=SandboxRequest(sandbox))
    rt = build_runtime(workspace, NonInteractiveApprover(), options)
    try:
        assert (await run1(rt, "Read", file_path="a.txt")).content == "1\talpha"
    finally:
        await rt.aclose()


async def test_a_hook_writes_inside_the_working_directories_only(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    command = f'cat >/dev/null; echo in > "$TOOLGATE_PROJECT_DIR/inside.txt"; echo out > {outside}'
    await _run_read_with_hook(workspace, command, "on")
    assert (workspace / "inside.txt").read_text() == "in\n"
    assert not outside.exists()  # refused, or written to the sandbox's private /tmp: never here


async def test_without_the_sandbox_the_same_hook_writes_anywhere(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    await _run_read_with_hook(workspace, f"cat >/dev/null; echo out > {outside}", "off")
    assert outside.read_text() == "out\n"
