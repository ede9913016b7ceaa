"""The system prompt: its parts, the project's instructions, the git status, and its stability."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest

from toolgate.agent.system_prompt import (
    MAX_INSTRUCTIONS_CHARS,
    build_system_prompt,
    current_environment,
    environment_section,
    tool_guidance,
)


def test_environment_and_git_status(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "new.py").write_text("x = 1\n")
    env = current_environment(tmp_path, today=dt.date(2030, 1, 2))
    text = environment_section(env)
    assert f"Working directory: {tmp_path}" in text and "2030-01-02" in text
    assert "?? new.py" in text


def test_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # git must not find a repo above
    env = current_environment(tmp_path)
    assert env.git_status is None
    assert "not a git repository" in environment_section(env)


def test_project_instructions_are_included_and_capped(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always run `make test`.\n")
    (tmp_path / "TOOLGATE.md").write_text("x" * (MAX_INSTRUCTIONS_CHARS + 10))
    prompt = build_system_prompt(current_environment(tmp_path), ["Read"], tmp_path)
    assert "Always run `make test`." in prompt
    assert f"only the first {MAX_INSTRUCTIONS_CHARS:,} are included" in prompt


def test_guidance_mentions_only_tools_that_exist() -> None:
    assert "Bash" not in tool_guidance(["Read", "TodoWrite"])
    assert "TodoWrite" in tool_guidance(["Read", "TodoWrite"])
    with_shell = tool_guidance(["Bash", "Edit", "Grep", "Read"])
    assert "Prefer the dedicated tools (Read, Edit, Grep)" in with_shell and "Read a file before you edit" in with_shell
