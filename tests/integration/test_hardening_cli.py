"""Issue 13 through the real command line: `toolgate permissions check` in every mode, and `toolgate run-tools`
where a call would run something (headless, so every "ask" is refused and nothing runs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MODES = ["default", "acceptEdits", "plan", "bypassPermissions"]
ALWAYS_ASKED = [
    ("Bash", {"command": "env"}),
    ("Bash", {"command": "printenv ANTHROPIC_API_KEY"}),
    ("Bash", {"command": "echo $GITHUB_TOKEN"}),
    ("Bash", {"command": "cat /proc/self/environ"}),
    ("Bash", {"command": "cat ~/.aws/credentials"}),
    ("Bash", {"command": "cat .env"}),
    ("Read", {"file_path": ".env.local"}),
    ("Read", {"file_path": "~/.ssh/id_ed25519"}),
    ("Write", {"file_path": ".claude/settings.json", "content": "{}"}),
    ("Write", {"file_path": ".github/workflows/ci.yml", "content": "on: push"}),
    ("Bash", {"command": "echo '{}' > .cursor/mcp.json"}),
    ("Bash", {"command": "git reset --hard"}),
    ("Bash", {"command": "git push --force"}),
    ("Bash", {"command": "find ~ -name '*.tmp' -delete"}),
    ("Bash", {"command": "chmod -R 777 ~"}),
    ("Bash", {"command": "dd if=/dev/zero of=/dev/sda"}),
]
UNSPLITTABLE = ["ls (", "echo 'abc", "cat a.txt &&", "ls $((", "echo `ls", "if true; then ls", "ls | | wc"]


def _toolgate(*args: str, stdin: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "toolgate", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("mode", MODES)
def test_permissions_check_asks_in_every_mode(workspace: Path, mode: str) -> None:
    lines = "".join(json.dumps({"tool": t, "input": i}) + "\n" for t, i in ALWAYS_ASKED)
    lines += "".join(json.dumps({"tool": "Bash", "input": {"command": c}}) + "\n" for c in UNSPLITTABLE)
    out = _toolgate(
        "permissions", "check", "--workspace", str(workspace), "--permission-mode", mode,
        "--allow", "Bash", "--allow", "Edit", "--allow", "Read(//**)", stdin=lines,
    )  # fmt: skip
    assert len(out) == len(ALWAYS_ASKED) + len(UNSPLITTABLE)
    for (tool, tool_input), answer in zip(ALWAYS_ASKED, out, strict=False):
        assert answer["decision"] == "ask" and "every mode" in answer["reason"], (mode, tool, tool_input, answer)
    for command, answer in zip(UNSPLITTABLE, out[len(ALWAYS_ASKED) :], strict=True):
        assert answer["decision"] == "ask" and answer["read_only"] is False, (mode, command, answer)


def _use(id_: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": tool_input}


def test_destructive_commands_do_not_run_in_bypass(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "work.txt").write_text("uncommitted\n")
    subprocess.run(["git", "-C", str(workspace), "add", "work.txt"], check=True)
    (workspace / "work.txt").write_text("more uncommitted\n")
    uses = [
        _use("reset", "Bash", command="git reset --hard"),
        _use("clean", "Bash", command="git clean -fdx"),
        _use("restore", "Bash", command="git checkout -- ."),
        _use("fine", "Bash", command="find . -name '*.pyc' -delete && echo cleaned"),
    ]
    out = _toolgate(
        "run-tools", "--workspace", str(workspace), "--permission-mode", "bypassPermissions",
        stdin="".join(json.dumps(u) + "\n" for u in uses),
    )  # fmt: skip
    results = {o["tool_use_id"]: o for o in out}
    for id_ in ("reset", "clean", "restore"):
        assert results[id_]["is_error"] and "every mode" in results[id_]["content"], results[id_]
    assert "cleaned" in results["fine"]["content"]
    assert (workspace / "work.txt").read_text() == "more uncommitted\n"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("replace_all", "yes", 'should be a boolean (true or false), but got a string ("yes")'),
        ("replace_all", 1, "should be a boolean (true or false), but got an integer (1)"),
        ("replace_all", "true", 'should be a boolean (true or false), but got a string ("true")'),
    ],
)
def test_booleans_are_strict(workspace: Path, field: str, value: Any, expected: str) -> None:
    (workspace / "a.txt").write_text("x\n")
    use = _use("e", "Edit", file_path="a.txt", old_string="x", new_string="y", **{field: value})
    out = _toolgate("run-tools", "--workspace", str(workspace), stdin=json.dumps(use) + "\n")
    assert out[0]["is_error"] and 'kind="invalid_input"' in out[0]["content"]
    assert f"`{field}` {expected}" in out[0]["content"]
    assert (workspace / "a.txt").read_text() == "x\n"


@pytest.mark.parametrize("value", ["5", 5.5, True])
def test_integers_are_strict(workspace: Path, value: Any) -> None:
    (workspace / "a.txt").write_text("x\n")
    out = _toolgate(
        "run-tools", "--workspace", str(workspace), stdin=json.dumps(_use("r", "Read", file_path="a.txt", offset=value))
    )
    assert (
        out[0]["is_error"]
        and 'kind="invalid_input"' in out[0]["content"]
        and "`offset` should be an integer" in (out[0]["content"])
    )
