"""`toolgate permissions check|list`: the editor's permission engine, explained on the command line.

check: stdin JSON Lines `{"tool": "Bash", "input": {"command": "git log"}}`; stdout one
`{"decision": ..., "read_only": ..., "reason": ..., "rule": ...}` per line (a line that is not a call gets
`{"error": ...}`). Nothing is run: no tool, no hook.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio

from toolgate.cli.options import runtime_from_args
from toolgate.core.permission import NonInteractiveApprover
from toolgate.permissions.edit_rules import list_rules
from toolgate.runtime import Runtime


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _parse(line: str) -> tuple[str, Any] | str:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"the line is not valid JSON ({exc.msg} at column {exc.colno})"
    if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
        return 'each line must be an object such as {"tool": "Bash", "input": {"command": "git log"}}'
    return item["tool"], item.get("input", {})


async def _check_lines(runtime: Runtime) -> None:
    stdin = anyio.wrap_file(sys.stdin)
    async for raw in stdin:
        line = raw.strip()
        if not line:
            continue
        parsed = _parse(line)
        if isinstance(parsed, str):
            _emit({"error": parsed})
            continue
        result = await runtime.check(*parsed)
        _emit(result.model_dump(mode="json"))


def _list(runtime: Runtime, as_json: bool) -> None:
    engine = runtime.permissions
    session = runtime.session
    listing = [r.model_dump(mode="json") for r in list_rules(engine)]
    if as_json:
        payload = {
            "mode": session.mode.value,
            "workspace_trusted": engine.book.workspace_trusted,
            "working_directories": [str(d) for d in session.working_dirs],
            "rules": listing,
            "settings_files": {name: str(path) for name, path in engine.book.files.items()},
            "problems": engine.problems,
        }
        _emit(payload)
        return
    out = sys.stdout
    out.write(f"mode: {session.mode.value}\n")
    trusted = engine.book.workspace_trusted
    out.write(f"workspace: {'trusted' if trusted else 'not trusted: its own settings files only restrict'}\n")
    out.write("working directories: " + ", ".join(str(d) for d in session.working_dirs) + "\n")
    if not listing:
        out.write("no rules: read-only calls inside the working directories run, everything else asks\n")
    width = max((len(r["rule"]) for r in listing), default=0)
    for row in listing:
        where = row["source"] + (f"  {row['file']}" if row["file"] else "")
        out.write(f"{row['behavior']:<5}  {row['rule']:<{width}}  {where}\n")
        if row["warning"]:
            out.write(f"       warning: {row['warning']}\n")
    for problem in engine.problems:
        out.write(f"problem: {problem}\n")


def permissions_command(args: argparse.Namespace) -> int:
    runtime = runtime_from_args(args, NonInteractiveApprover())

    async def main() -> None:
        try:
            if args.action == "check":
                await _check_lines(runtime)
            else:
                _list(runtime, args.json)
        finally:
            with anyio.CancelScope(shield=True):
                await runtime.aclose()

    anyio.run(main)
    return 0
