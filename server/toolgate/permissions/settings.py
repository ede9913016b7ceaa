"""Settings files: the schema, reading them with errors that name the line, and safe concurrent writes.

    {"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "default",
                     "additionalDirectories": [...]},
     "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}],
               "PostToolUse": [...], "SessionStart": [...], ...},      (every event: permissions/hooks/events.py)
     "trustedWorkspaces": [...],     (user settings file only; see trust.py)
     "trustedHooks": [...]}          (user settings file only: digests of reviewed workspace hooks, hooks/config.py)

Keys toolgate does not know are kept, untouched and in place, when toolgate writes a file. A file that does
not parse or does not fit the schema is reported with its line and never written to. Writes hold a lock on the
file's directory while they re-read, change and atomically replace the file, so two processes adding rules
at the same time both keep their rule.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolgate.core.atomic_file import write_file_atomically
from toolgate.core.permission import PermissionMode
from toolgate.permissions.jsonpos import locate

SETTINGS_DIR = ".toolgate"
PROJECT_FILE = "settings.json"
LOCAL_FILE = "settings.local.json"
DEFAULT_HOOK_TIMEOUT = 60.0


class HookCommand(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float | None = Field(default=None, gt=0, le=3600, description="seconds (default 60)")


class HookMatcher(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    matcher: str = Field(default="*", description="tool name, 'A|B', a regular expression, or '*' / ''")
    hooks: list[HookCommand] = Field(default_factory=list)


class HooksSettings(BaseModel):
    """One list per event (the names of permissions/hooks/events.py, which a test keeps in step with these)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    SessionStart: list[HookMatcher] = Field(default_factory=list)
    UserPromptSubmit: list[HookMatcher] = Field(default_factory=list)
    PreToolUse: list[HookMatcher] = Field(default_factory=list)
    PermissionRequest: list[HookMatcher] = Field(default_factory=list)
    PostToolUse: list[HookMatcher] = Field(default_factory=list)
    PostToolUseFailure: list[HookMatcher] = Field(default_factory=list)
    Notification: list[HookMatcher] = Field(default_factory=list)
    PreCompact: list[HookMatcher] = Field(default_factory=list)
    Stop: list[HookMatcher] = Field(default_factory=list)
    SubagentStop: list[HookMatcher] = Field(default_factory=list)
    SessionEnd: list[HookMatcher] = Field(default_factory=list)

    def by_event(self) -> dict[str, list[HookMatcher]]:
        """Every event's matchers, by event name (events with none left out)."""
        return {name: value for name in type(self).model_fields if (value := getattr(self, name))}


class PermissionsSettings(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    defaultMode: PermissionMode | None = None
    additionalDirectories: list[str] = Field(default_factory=list)


class EnvSettings(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    # Variables handed to commands although their names look secret (core/child_env.py). User file only.
    passThrough: list[str] = Field(default_factory=list)


class SubagentsSettings(BaseModel):
    """Read from the user's own settings file only: a workspace must not widen what its children may do."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    maxDepth: int = Field(default=1, ge=0, description="1: a subagent starts no subagent; 0: no subagents at all.")
    customTypesInheritBypass: bool = False  # a custom type's child of a bypassPermissions parent also bypasses


class Settings(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    permissions: PermissionsSettings = Field(default_factory=PermissionsSettings)
    hooks: HooksSettings = Field(default_factory=HooksSettings)
    env: EnvSettings = Field(default_factory=EnvSettings)
    # Read from the user's own settings file only: folders whose settings files may widen permissions (trust.py).
    trustedWorkspaces: list[str] = Field(default_factory=list)
    # Read from the user's own settings file only: digests of workspace hooks the person reviewed (hooks/config.py).
    trustedHooks: list[str] = Field(default_factory=list)
    subagents: SubagentsSettings | None = None  # the user's settings file only


class SettingsError(Exception):
    """A settings file that cannot be used. It is reported and left exactly as it is."""

    def __init__(self, path: Path, message: str, line: int | None = None, column: int | None = None) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.detail = message
        where = f"{path}:{line}:{column}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


def parse_settings(text: str, path: Path) -> Settings:
    """Parse and validate a settings file's text; `SettingsError` names the line of the first problem."""
    try:
        raw = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise SettingsError(path, f"this is not valid JSON ({exc.msg})", exc.lineno, exc.colno) from None
    if not isinstance(raw, dict):
        raise SettingsError(path, "the file must hold one JSON object ({...})", 1, 1)
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        location = [p for p in first["loc"] if isinstance(p, str | int)]
        line, column = locate(text, location)
        field = ".".join(str(p) for p in location) or "(top level)"
        raise SettingsError(path, f"{field}: {first['msg']}", line, column) from None


def read_settings_text(path: Path) -> str | None:
    """The file's text, or None when there is no such file."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        # While sandboxed commands run, an absent protected file (`.mcp.json`, …) has an empty directory standing in
        # for it (sandbox/placeholders.py): that is still no file. A directory with anything in it is reported.
        if _empty_directory(path):
            return None
        raise SettingsError(path, f"the file cannot be read ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(path, f"the file cannot be read ({exc})") from None


def _empty_directory(path: Path) -> bool:
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def read_settings(path: Path) -> Settings | None:
    """The file's settings, or None when there is no such file."""
    text = read_settings_text(path)
    return None if text is None else parse_settings(text, path)


# --- writing ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _directory_lock(directory: Path) -> Iterator[None]:
    """An exclusive lock held on the directory itself: no stray lock files beside the settings."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _indent_of(text: str) -> int | str:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


Mutation = Callable[[dict[str, Any]], bool]


def update_settings(path: Path, mutate: Mutation) -> bool:
    """Re-read `path` under a lock, apply `mutate` to its raw JSON object, and write it back atomically.

    `mutate` returns whether it changed anything. Returns whether the file was written; a file that did not
    exist is created (with its directory). A file that does not parse is left alone: `SettingsError`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with _directory_lock(path.parent):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        parse_settings(text, path)  # refuse to touch a broken file
        raw: dict[str, Any] = json.loads(text) if text.strip() else {}
        if not mutate(raw):
            return False
        parse_settings(json.dumps(raw), path)  # never write something we could not read back
        body = json.dumps(raw, indent=_indent_of(text), ensure_ascii=False) + "\n"
        write_file_atomically(path, body.encode("utf-8"))
        return True


def _rule_list(raw: dict[str, Any], behavior: str) -> list[Any]:
    permissions = raw.setdefault("permissions", {})
    return permissions.setdefault(behavior, [])  # type: ignore[no-any-return]


def add_rule_mutation(behavior: str, rule: str) -> Mutation:
    def mutate(raw: dict[str, Any]) -> bool:
        rules = _rule_list(raw, behavior)
        if rule in rules:
            return False
        rules.append(rule)
        return True

    return mutate


def remove_rule_mutation(behavior: str, rule: str) -> Mutation:
    def mutate(raw: dict[str, Any]) -> bool:
        rules = raw.get("permissions", {}).get(behavior)
        if not isinstance(rules, list) or rule not in rules:
            return False
        rules[:] = [r for r in rules if r != rule]
        return True

    return mutate


# --- keeping the local file out of git ---------------------------------------------------------------------


def _git_dir(start: Path) -> tuple[Path, Path] | None:
    """(repository root, git common dir) for the repository holding `start`, without running git."""
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return directory, dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = (directory / line.removeprefix("gitdir:").strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
            return directory, git_dir
    return None


def exclude_from_git(path: Path) -> Path | None:
    """Add `path` to its repository's `.git/info/exclude` (once). Returns the exclude file, or None."""
    found = _git_dir(path.parent)
    if found is None:
        return None
    root, git_dir = found
    try:
        entry = "/" + path.relative_to(root).as_posix()
    except ValueError:
        return None
    exclude = git_dir / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with _directory_lock(exclude.parent):
        try:
            current = exclude.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = ""
        if entry in current.splitlines():
            return exclude
        prefix = "" if not current or current.endswith("\n") else "\n"
        with open(exclude, "a", encoding="utf-8") as handle:
            handle.write(f"{prefix}{entry}\n")
    return exclude
