"""The system prompt, assembled once per session from parts and then left alone.

It is part of the prompt-cache key, so nothing in it may change between turns: the date and the git status
are taken when the session starts (or resumes), never per request.
"""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from toolgate.core.child_env import child_environment
from toolgate.permissions.safety import TOOLGATE_INSTRUCTIONS

INSTRUCTION_FILES = TOOLGATE_INSTRUCTIONS  # protected for writing, in every spelling that reaches them
MAX_INSTRUCTIONS_CHARS = 40_000
MAX_GIT_STATUS_LINES = 40
GIT_TIMEOUT_SECONDS = 3.0

ROLE = """\
You are toolgate, a coding agent working in the user's project through the tools listed with this request. \
You read and change files, search the code and run commands only through those tools; every call is checked \
against the user's permission rules, and some need the user's approval. Be direct and concise: say what you \
are doing and what you found, without filler."""


@dataclass(frozen=True)
class Environment:
    cwd: Path
    platform: str
    date: dt.date
    git_status: str | None  # None: not a git repository (or git is unavailable)


def tool_guidance(tool_names: Collection[str]) -> str:
    """Advice that depends only on which tools exist; advice about a missing tool is left out."""
    lines = ["# Using the tools"]
    dedicated = [n for n in ("Read", "Edit", "Write", "Grep", "Glob") if n in tool_names]
    if "Bash" in tool_names and dedicated:
        lines.append(
            f"- Prefer the dedicated tools ({', '.join(dedicated)}) to shell equivalents such as cat, sed, grep, "
            "find or echo redirections: they are faster, safer and their results are easier to check. Use Bash "
            "for builds, tests, git and other programs."
        )
    if "Read" in tool_names and ({"Edit", "Write"} & set(tool_names)):
        lines.append(
            "- Read a file before you edit or overwrite it; the edit tools refuse files you have not read, and a "
            "file that changed since you read it must be read again."
        )
    lines.append(
        "- When several calls do not depend on each other (reading a few files, several searches), make them in "
        "the same reply: read-only calls run in parallel."
    )
    if "TodoWrite" in tool_names:
        lines.append(
            "- For work with several steps, keep a todo list with TodoWrite and update it as you go; the user sees it."
        )
    lines.append(
        "- A call that fails returns an error that says why; fix the cause instead of repeating the same call. "
        "If the user declines a call, do not retry it unchanged: ask what they want instead."
    )
    return "\n".join(lines)


def git_status(cwd: Path) -> str | None:
    """`git status --short --branch`, capped (and the cap said). None when cwd is not inside a repository."""
    env = child_environment(extra={"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"})  # never take the lock
    try:
        done = subprocess.run(
            ["git", "status", "--short", "--branch"],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = done.stdout.splitlines()
    if len(lines) > MAX_GIT_STATUS_LINES:
        hidden = len(lines) - MAX_GIT_STATUS_LINES
        lines = [*lines[:MAX_GIT_STATUS_LINES], f"... and {hidden} more changed paths (run git status to see all)"]
    return "\n".join(lines) if lines else "(clean)"


def current_environment(cwd: Path, today: dt.date | None = None) -> Environment:
    return Environment(
        cwd=cwd,
        platform=f"{platform.system()} {platform.release()}".strip(),
        date=today or dt.date.today(),
        git_status=git_status(cwd),
    )


def environment_section(env: Environment) -> str:
    lines = [
        "# Environment",
        f"- Working directory: {env.cwd}",
        f"- Platform: {env.platform}",
        f"- Date when this session started: {env.date.isoformat()}",
    ]
    if env.git_status is None:
        lines.append("- Git: the working directory is not a git repository.")
    else:
        lines.append("- Git status when this session started (it may have changed since):")
        lines.append("```\n" + env.git_status + "\n```")
    return "\n".join(lines)


def workspace_instructions(workspace: Path) -> str | None:
    """The project's own instructions (TOOLGATE.md, AGENTS.md), capped with the cap announced."""
    sections = []
    for name in INSTRUCTION_FILES:
        path = workspace / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if len(text) > MAX_INSTRUCTIONS_CHARS:
            text = (
                text[:MAX_INSTRUCTIONS_CHARS] + f"\n\n[{name} is {len(text):,} characters; only the first "
                f"{MAX_INSTRUCTIONS_CHARS:,} are included here. Read the file for the rest.]"
            )
        sections.append(f"Contents of {path}:\n\n{text.strip()}")
    if not sections:
        return None
    return (
        "# Project instructions\nThe project's own instructions follow. Follow them; where they conflict with "
        "the guidance above, they win.\n\n" + "\n\n".join(sections)
    )


def build_system_prompt(env: Environment, tool_names: Collection[str], workspace: Path) -> str:
    parts = [ROLE, tool_guidance(tool_names), environment_section(env)]
    instructions = workspace_instructions(workspace)
    if instructions:
        parts.append(instructions)
    return "\n\n".join(parts)
