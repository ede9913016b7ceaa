"""Subagent types: what a child agent may use and how it is told to work.

Built in: `explore` (looks only: Read, Glob, Grep and read-only Bash) and `general` (the parent's tools). Custom
types are Markdown files, `NAME.md`, in the user's config dir ($XDG_CONFIG_HOME/toolgate/agents) and in the
workspace's `.toolgate/agents` (read only when the workspace is trusted, like its widening settings):

    ---
    name: reviewer
    description: Reviews a change and reports problems.
    tools: Read, Grep, Glob
    model: claude-haiku-4-5
    ---
    You review code. ...

The front matter is parsed by a small strict parser (one `key: value` per line, only these four keys); a file
that breaks a rule is reported with its path and line, and its type is not offered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

TypeSource = Literal["builtin", "user", "workspace"]
EXPLORE_TOOLS = ("Read", "Glob", "Grep", "Bash")
# Tools a child never gets: the todo list is the parent's plan, and the Agent tool is granted by depth alone.
NEVER_FOR_CHILDREN = frozenset({"TodoWrite", "Agent"})
_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_KEYS = ("name", "description", "tools", "model")


class AgentType(BaseModel):
    """One kind of child agent. `tools` None: the parent's tools. `read_only`: every call the child makes must
    be a read (a write is refused without asking), whatever its parent may do."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    description: str = Field(min_length=1)
    tools: tuple[str, ...] | None = None
    model: str | None = None
    prompt: str = ""
    read_only: bool = False
    source: TypeSource = "builtin"

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("a name is lower-case letters, digits, '-' or '_', starting with a letter (at most 40)")
        return value

    @property
    def custom(self) -> bool:
        return self.source != "builtin"


BUILTIN_TYPES: dict[str, AgentType] = {
    "explore": AgentType(
        name="explore",
        description="Finds things out without changing anything: reads files, searches, runs read-only commands.",
        tools=EXPLORE_TOOLS,
        read_only=True,
        prompt=(
            "You explore the code to answer the task below. You can only look: any call that would change a file "
            "or run a writing command is refused. Answer with what you found, precisely (paths, line numbers)."
        ),
    ),
    "general": AgentType(
        name="general",
        description="Does a self-contained piece of work with the parent's tools and permissions.",
        prompt="You carry out the task below on your own and finish with a short report of what you did.",
    ),
}


class AgentTypeError(ValueError):
    """A custom type's file that cannot be used; the message names the file and what to fix."""


def parse_agent_file(text: str, path: Path, source: TypeSource) -> AgentType:
    """The type a `NAME.md` file describes. Raises AgentTypeError saying which line is wrong and why."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise AgentTypeError(f"{path}: the file must start with a '---' line opening its front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise AgentTypeError(f"{path}: the front matter has no closing '---' line") from None
    fields: dict[str, str] = {}
    for number in range(1, end):
        line = lines[number]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        key = key.strip()
        if not colon or key not in _KEYS:
            raise AgentTypeError(
                f"{path}:{number + 1}: expected 'key: value' with a key among {', '.join(_KEYS)}, found {line!r}"
            )
        if key in fields:
            raise AgentTypeError(f"{path}:{number + 1}: {key} is given twice")
        fields[key] = value.strip()
    if fields.get("name") != path.stem:
        raise AgentTypeError(f"{path}: the front matter's name must be the file's name, {path.stem!r}")
    tools = fields.get("tools")
    try:
        return AgentType(
            name=fields["name"],
            description=fields.get("description", ""),
            tools=tuple(t.strip() for t in tools.strip("[]").split(",") if t.strip()) if tools is not None else None,
            model=fields.get("model") or None,
            prompt="\n".join(lines[end + 1 :]).strip(),
            source=source,
        )
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in exc.errors())
        raise AgentTypeError(f"{path}: {problems}") from None


def user_agents_dir(environ: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    env = os.environ if environ is None else environ
    config = env.get("XDG_CONFIG_HOME") or str((home or Path.home()) / ".config")
    return Path(config) / "toolgate" / "agents"


@dataclass(frozen=True, slots=True)
class AgentTypes:
    """The types a session offers (built-in, then the user's, then the workspace's: a later one with the same
    name replaces an earlier custom one, never a built-in), and the files that could not be used."""

    types: Mapping[str, AgentType]
    problems: tuple[str, ...] = ()


def load_agent_types(workspace: Path, *, trusted: bool, user_dir: Path | None = None) -> AgentTypes:
    found: dict[str, AgentType] = dict(BUILTIN_TYPES)
    problems: list[str] = []
    places: list[tuple[Path, TypeSource]] = [(user_dir or user_agents_dir(), "user")]
    if trusted:
        places.append((workspace / ".toolgate" / "agents", "workspace"))
    for directory, source in places:
        for path in sorted(directory.glob("*.md")) if directory.is_dir() else ():
            try:
                agent_type = parse_agent_file(path.read_text(encoding="utf-8"), path, source)
            except (AgentTypeError, OSError, UnicodeDecodeError) as exc:
                problems.append(str(exc))
                continue
            if agent_type.name in BUILTIN_TYPES:
                problems.append(f"{path}: {agent_type.name!r} is a built-in type and cannot be replaced; rename it")
                continue
            found[agent_type.name] = agent_type
    return AgentTypes(found, tuple(problems))
