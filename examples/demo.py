"""`make demo-headless`: copy the demo workspace, drive `toolgate run-tools` with a few tool calls, and print what
each call returned. No editor, no model: the tool layer on its own (`make run` and `make demo` start the editor)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

CALLS: list[object] = [
    {"type": "tool_use", "id": "read-1", "name": "Read", "input": {"file_path": "src/greet.py"}},
    [
        {"type": "tool_use", "id": "read-2", "name": "Read", "input": {"file_path": "README.md"}},
        {
            "type": "tool_use",
            "id": "read-3",
            "name": "Read",
            "input": {"file_path": "src/greet.py", "offset": 4, "limit": 2},
        },
    ],
    {"type": "tool_use", "id": "read-4", "name": "Read", "input": {"file_path": "src/gret.py"}},
    {"type": "tool_use", "id": "read-5", "name": "Read", "input": {"file_path": "/etc/hostname"}},
]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="toolgate-demo-") as tmp:
        workspace = Path(tmp) / "workspace"
        shutil.copytree(HERE / "demo-workspace", workspace)
        print(f"toolgate demo: a headless session on a copy of examples/demo-workspace ({workspace})\n")
        stdin = "".join(json.dumps(line) + "\n" for line in CALLS)
        proc = subprocess.run(
            [sys.executable, "-m", "toolgate", "run-tools", "--workspace", str(workspace)],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
        calls = {c["id"]: c for line in CALLS for c in (line if isinstance(line, list) else [line])}  # type: ignore[index,union-attr]
        for raw in proc.stdout.splitlines():
            result = json.loads(raw)
            call = calls[result["tool_use_id"]]
            status = "error" if result["is_error"] else "ok"
            print(f"→ {call['name']} {json.dumps(call['input'])}  [{status}]")
            print("  " + str(result["content"]).replace("\n", "\n  ") + "\n")
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
        return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
