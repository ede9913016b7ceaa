"""A server's tool list pinned by hash, and what changed since the pin (the "rug pull" check).

The pin covers every tool's name, description, input schema and annotations: a server that was approved with
harmless descriptions and later changes them (on a restart, or by `tools/list_changed`) has its tools hidden
from the model until the person looks at the difference and approves again.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from typing import Any

ToolSnapshot = dict[str, dict[str, Any]]


def snapshot_of(tools: list[Any]) -> ToolSnapshot:
    """name → {description, input_schema, annotations} for SDK `Tool` objects."""
    snapshot: ToolSnapshot = {}
    for tool in tools:
        annotations = tool.annotations.model_dump(mode="json", exclude_none=True) if tool.annotations else {}
        snapshot[tool.name] = {
            "description": tool.description or "",
            "input_schema": tool.input_schema,
            "annotations": annotations,
        }
    return snapshot


def snapshot_hash(snapshot: ToolSnapshot) -> str:
    canonical = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def snapshot_diff(pinned: ToolSnapshot, current: ToolSnapshot) -> str:
    """A unified diff of the two tool lists, one JSON document per tool, for a person to read."""

    def lines(snapshot: ToolSnapshot) -> list[str]:
        return json.dumps(snapshot, sort_keys=True, indent=2, ensure_ascii=False).splitlines(keepends=True)

    diff = difflib.unified_diff(lines(pinned), lines(current), "approved tools", "tools now")
    return "".join(diff)


def changed_tools(pinned: ToolSnapshot, current: ToolSnapshot) -> list[str]:
    """Names of the tools added, removed or changed, sorted."""
    return sorted(name for name in pinned.keys() | current.keys() if pinned.get(name) != current.get(name))
