"""The one-line summary a person sees on a tool card, an approval or a diff review: short paths, exact commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolgate.tools import builtin_tools

WS = Path("/home/dev/project")

CASES: list[tuple[str, dict[str, Any], str]] = [
    ("Read", {"file_path": "/home/dev/project/src/app.py"}, "src/app.py"),
    ("Read", {"file_path": "/home/dev/project/src/app.py", "offset": 10, "limit": 5}, "src/app.py (lines 10–14)"),
    ("Read", {"file_path": "/etc/hosts"}, "/etc/hosts"),  # outside: absolute, so it is unmistakable
    ("Read", {"file_path": "src/../README.md"}, "src/../README.md"),  # relative: as the model wrote it
    ("Read", {"file_path": "/home/dev/project-other/x"}, "/home/dev/project-other/x"),  # a sibling, not inside
    ("Edit", {"file_path": f"{WS}/a.py", "old_string": "a", "new_string": "b"}, "a.py"),
    ("Edit", {"file_path": f"{WS}/a.py", "old_string": "a", "new_string": "b", "replace_all": True},
     "a.py (all occurrences)"),
    ("Write", {"file_path": f"{WS}/src/hello.py", "content": "print('hi')\n"}, "src/hello.py (1 line)"),
    ("Write", {"file_path": f"{WS}/src/../../escape.txt", "content": ""}, "/home/dev/escape.txt (0 lines)"),
    ("NotebookEdit", {"notebook_path": f"{WS}/nb.ipynb", "new_source": "x", "cell_id": "c1"}, "nb.ipynb: replace c1"),
    ("Glob", {"pattern": "**/*.py", "path": f"{WS}/src"}, "**/*.py in src"),
    ("Grep", {"pattern": "TODO", "path": f"{WS}/lib", "glob": "*.ts"}, "'TODO' in lib (*.ts)"),
    # A regex as typed: its backslashes and quotes are not escaped a second time.
    ("Grep", {"pattern": r"def \w+\(self"}, r"'def \w+\(self'"),
    ("Grep", {"pattern": "it's <b> & `x`"}, '"it\'s <b> & `x`"'),
    # A command is shown exactly as it will run, paths and all: what is approved is what runs.
    ("Bash", {"command": f"cat {WS}/a.txt"}, f"cat {WS}/a.txt"),
]  # fmt: skip


@pytest.mark.parametrize(("tool_name", "tool_input", "expected"), CASES)
def test_summary(tool_name: str, tool_input: dict[str, Any], expected: str) -> None:
    [tool] = [t for t in builtin_tools() if t.name == tool_name]
    assert tool.summary(tool.input_model.model_validate(tool_input), WS) == expected
