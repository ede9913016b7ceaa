"""Issue 13 §2 and §3: config that can run code is protected for writing, and credentials for reading, in
every mode (bypassPermissions included), through every form of a path (case-folded, symlinks resolved)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.unit.permissions.conftest import RuntimeInMode
from tests.unit.permissions.helpers import bash, check, make_runtime

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime

MODES = list(PermissionMode)
EVERYTHING = ["Edit", "Edit(//**)", "Read(//**)", "Bash", "Scribe"]

PROTECTED_CONFIG = [
    ".claude/settings.json", ".claude/settings.local.json", ".gemini/settings.json", ".codex/config.toml",
    ".cursor/rules/x.mdc", ".continue/config.json", ".roo/rules.md", ".clinerules", ".clinerules/a.md",
    ".windsurf/rules.md", ".kiro/steering/x.md", ".aider.conf.yml", ".github/workflows/ci.yml",
    ".GitHub/Workflows/ci.yml", ".gitlab-ci.yml", ".husky/pre-commit", ".pre-commit-config.yaml",
    ".git/hooks/pre-push", "AGENTS.md", "TOOLGATE.md", "sub/agents.md", "CLAUDE.md", "Claude.md", "GEMINI.md",
    "AGENT.md", "CRUSH.md", ".github/copilot-instructions.md", ".devcontainer/devcontainer.json",
    ".devcontainer.json",
    "~/.claude/settings.json", "~/.claude.json", "~/.gemini/settings.json", "~/.codex/config.toml",
    "~/.config/toolgate/anything", "~/.config/Code/User/settings.json", "~/.config/Code/User/keybindings.json",
    "~/.config/Code - Insiders/User/settings.json", "~/.config/VSCodium/User/settings.json",
    "~/.local/share/code-server/User/settings.json", "~/Library/Application Support/Code/User/settings.json",
    "~/AppData/Roaming/Code/User/settings.json", "~/.vscode-server/data/Machine/settings.json",
]  # fmt: skip
CREDENTIALS = [
    "~/.ssh/id_rsa", "~/.ssh/id_ed25519", "~/.SSH/id_rsa", "~/.aws/credentials", "~/.aws/config",
    "~/.config/gcloud/application_default_credentials.json", "~/.azure/accessTokens.json", "~/.kube/config",
    "~/.docker/config.json", "~/.netrc", "~/.git-credentials", "~/.config/gh/hosts.yml", "~/.npmrc", "~/.pypirc",
    "~/.local/share/keyrings/login.keyring", "~/.gnupg/private-keys-v1.d/x.key", ".env", ".env.local",
    ".env.production", "sub/.env", ".ENV",
]  # fmt: skip
READABLE = ["~/.ssh/known_hosts", "~/.ssh/id_rsa.pub", ".env.example", ".env.sample", "CLAUDE.md", "src/app.py"]
# Before the instruction files of other agents were protected for writing, CLAUDE.md was an ordinary file;
# it is still read like one.


def _path(template: str, home: Path) -> str:
    return str(home) + template[1:] if template.startswith("~") else template


@pytest.fixture
def rt_for(runtime_in_mode: RuntimeInMode) -> Callable[[PermissionMode], Runtime]:
    return lambda mode: runtime_in_mode(mode, allow=EVERYTHING)


@pytest.mark.parametrize("mode", MODES)
async def test_config_that_runs_code_is_protected_in_every_mode(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode, workspace: Path
) -> None:
    rt = rt_for(mode)
    home = workspace.parent / "home"
    for template in PROTECTED_CONFIG:
        target = _path(template, home)
        for name in ("Write", "Edit", "Scribe"):
            result = await check(rt, name, file_path=target)
            assert (result.decision, "every mode" in result.reason) == ("ask", True), (mode, name, target)
        for command in (f"echo x > '{target}'", f"cp a.txt '{target}'", f"tee -a '{target}' < a.txt"):
            result = await bash(rt, command)
            assert (result.decision, "every mode" in result.reason) == ("ask", True), (mode, command)


@pytest.mark.parametrize("mode", MODES)
async def test_credentials_ask_for_reading_in_every_mode(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode, workspace: Path
) -> None:
    rt = rt_for(mode)
    home = workspace.parent / "home"
    for template in CREDENTIALS:
        target = _path(template, home)
        result = await check(rt, "Read", file_path=target)
        assert (result.decision, "every mode" in result.reason) == ("ask", True), (mode, target, result.reason)
        shell_forms = [f"cat '{target}'", f"head -5 '{target}'", f"grep -n key '{target}'", f"base64 '{target}'"]
        if template.startswith("~/"):
            shell_forms += [f"cat {template}", f"cat $HOME/{template[2:]}", f'cat "${{HOME}}/{template[2:]}"']
        for command in shell_forms:
            result = await bash(rt, command)
            assert (result.decision, "every mode" in result.reason) == ("ask", True), (mode, command, result.reason)
    for command in ("cat ~/.ssh/*", "ls ~/.aws", "grep -r token ~", "python3 tool.py ~/.netrc"):
        result = await bash(rt, command)
        assert (result.decision, "every mode" in result.reason) == ("ask", True), (mode, command, result.reason)
    result = await check(rt, "Grep", pattern="x", path=str(home))
    assert result.decision == "ask", mode


async def test_credentials_behind_a_symlink_are_found(
    rt_for: Callable[[PermissionMode], Runtime], workspace: Path
) -> None:
    home = workspace.parent / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[default]\n")
    (workspace / "innocent.txt").symlink_to(home / ".aws" / "credentials")
    rt = rt_for(PermissionMode.BYPASS)
    for result in (await check(rt, "Read", file_path="innocent.txt"), await bash(rt, "cat innocent.txt")):
        assert result.decision == "ask" and ".aws" in result.reason


async def test_public_files_stay_readable(rt_for: Callable[[PermissionMode], Runtime], workspace: Path) -> None:
    rt = rt_for(PermissionMode.DEFAULT)
    home = workspace.parent / "home"
    for template in READABLE:
        target = _path(template, home)
        result = await check(rt, "Read", file_path=target)
        assert result.decision == "allow", (target, result.reason)


@pytest.mark.parametrize("mode", MODES)
async def test_a_core_hooks_path_target_is_protected(workspace: Path, mode: PermissionMode, tmp_path: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text('[core]\n\thooksPath = "tools/git-hooks"\n')
    rt = make_runtime(workspace, mode=mode, allow=EVERYTHING)
    try:
        for target in ("tools/git-hooks/pre-commit", "TOOLS/git-hooks/post-checkout"):
            result = await check(rt, "Write", file_path=target)
            assert result.decision == "ask" and "hooksPath" in result.reason, (mode, target, result.reason)
        other = await check(rt, "Write", file_path="tools/other.sh")
        assert "hooksPath" not in other.reason and (other.decision == "allow" or mode is PermissionMode.PLAN)
    finally:
        await rt.aclose()
