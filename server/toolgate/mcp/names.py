"""The names MCP tools go by in toolgate: `mcp__<server>__<tool>`, within what model APIs accept.

APIs accept `^[a-zA-Z0-9_-]{1,64}$`. Other characters become `_`; a server name never holds `__` (the
separator), so the rule `mcp__server` can tell which server a tool belongs to. Two tools that end up with the
same name are told apart by a short hash of their original names, the same on every run.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def _clean(part: str) -> str:
    return _NOT_ALLOWED.sub("_", part) or "_"


def server_part(server: str) -> str:
    return re.sub(r"_{2,}", "_", _clean(server)).strip("_") or "server"


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def tool_names(server: str, tools: list[str]) -> dict[str, str]:
    """original tool name → toolgate name, for one server's tools; deterministic and collision-free."""
    prefix = f"mcp__{server_part(server)}__"
    wanted: dict[str, list[str]] = {}
    for tool in sorted(tools):
        name = prefix + _clean(tool)
        if len(name) > MAX_NAME:
            name = name[: MAX_NAME - 7] + "_" + _short_hash(tool)
        wanted.setdefault(name, []).append(tool)
    names: dict[str, str] = {}
    for name, originals in wanted.items():
        if len(originals) == 1 and name not in names.values():
            names[originals[0]] = name
            continue
        for original in originals:
            names[original] = f"{name[: MAX_NAME - 7]}_{_short_hash(original)}"
    return names
