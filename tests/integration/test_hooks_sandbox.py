"""Hooks run in the session's sandbox when it is on: writable where a Bash command is, nowhere else (real bwrap)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.integration.test_sandbox_runtime import on
from tests.unit.permissions.helpers import fake_tools

from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.permissions.hooks.config import ConfiguredHook
from toolgate.permissions.hooks.outcome import merge
from toolgate.permissions.hooks.process import run_hook
from toolgate.permissions.settings import HookCommand
from toolgate.permissions.sources import RuleSource
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


async def test_a_hook_the_sandbox_will_not_start_tells_the_person_what_to_change(
    workspace: Path, tmp_path: Path
) -> None:
    """The directory it would start in exists here but not inside (/tmp there is a private one). The person reads the
    problem, and a hook cannot be let out of the sandbox: nothing about the model's outside_sandbox."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    hook = ConfiguredHook("PreToolUse", "*", HookCommand(command="cat"), RuleSource("user", None, workspace), None)
    sandbox = on()
    place = sandbox.hook_place([workspace], tmp_path)
    try:
        run = await run_hook(hook, b"{}", elsewhere, {"PATH": "/usr/bin:/bin"}, place)
    finally:
        place.finish()
        sandbox.close()

    [problem] = merge("PreToolUse", [run]).problems
    assert problem.startswith(f"{hook.describe()} could not be started (The sandbox could not start the command: ")
    assert f"could not enter {elsewhere} inside the sandbox" in problem
    assert "Change the hook's command, or the sandbox settings in your user settings" in problem
    assert "outside_sandbox" not in problem and "call it again" not in problem.lower()
