"""Scripted sessions shared by the tests and the benchmarks.

`long_session`: a session of `turns` model requests that reads one large file per request and then gives its
final answer; with a small context window it cannot finish without making room (compaction, clearing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SUMMARY_SECTIONS = (
    "Goal and constraints",
    "Decisions",
    "Files touched and their state",
    "Todo list",
    "Open errors",
    "Next step",
)
FINAL_ANSWER = "All the modules are read: the parser is in module_00.py."


def scripted_summary() -> str:
    return "\n".join(f"## {section}\n(scripted) {section.lower()} so far" for section in SUMMARY_SECTIONS)


def write_long_session_files(workspace: Path, count: int, lines: int = 150) -> list[str]:
    names = [f"module_{n:02d}.py" for n in range(count)]
    for name in names:
        body = "".join(f"def function_{i}_{name[7:9]}(value):  # does step {i} of the work\n" for i in range(lines))
        (workspace / name).write_text(body)
    return names


def long_session(files: list[str], *, context_window: int | None = None) -> dict[str, Any]:
    """A script: one Read per request over `files`, then the final answer (len(files) + 1 requests)."""
    steps: list[dict[str, Any]] = [
        {"text": f"Reading {name}.", "tool_uses": [{"name": "Read", "input": {"file_path": name}}]} for name in files
    ]
    steps.append({"text": FINAL_ANSWER})
    script: dict[str, Any] = {"steps": steps, "no_tools": {"text": scripted_summary()}}
    if context_window is not None:
        script["context_window"] = context_window
    return script
