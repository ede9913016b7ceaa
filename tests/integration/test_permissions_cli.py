"""`toolgate permissions check|list` and `toolgate run-tools` rule flags, as real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

TOOLGATE = [sys.executable, "-m", "toolgate"]


def toolgate(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLGATE, *args], input=stdin, capture_output=True, text=True, timeout=60, start_new_session=True
    )


def jsonl(items: list[Any]) -> str:
    return "".join((i if isinstance(i, str) else json.dumps(i)) + "\n" for i in items)


@pytest.fixture
def project(workspace: Path, tmp_path: Path) -> Path:
    (workspace / "a.txt").write_text("a\n")
    (workspace / ".env").write_text("SECRET=1\n")
    (tmp_path / "outside.txt").write_text("o\n")
    return workspace


def test_check_answers_one_line_per_call(project: Path, tmp_path: Path) -> None:
    calls: list[Any] = [
        {"tool": "Read", "input": {"file_path": "a.txt"}},
        {"tool": "Read", "input": {"file_path": str(tmp_path / "outside.txt")}},
        {"tool": "Read", "input": {"file_path": ".env"}},
        "not json",
        {"tool": "Read", "input": {"file_path": "docs/guide.md"}},
        {"tool": "Read"},
        {"tool": "NoSuchTool", "input": {}},
    ]
    proc = toolgate(
        "permissions", "check", "--workspace", str(project), "--deny", "Read(./.env)", "--allow", "Read(docs/**)",
        stdin=jsonl(calls),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(calls)
    assert out[0] == {
        "decision": "allow",
        "read_only": True,
        "reason": "it is read-only and stays inside the working directories",
        "rule": None,
    }
    assert out[1]["decision"] == "ask" and "outside the working directories" in out[1]["reason"]
    assert out[2]["decision"] == "deny" and out[2]["rule"] == "Read(./.env)"
    assert set(out[3]) == {"error"}
    assert out[4]["decision"] == "allow" and out[4]["rule"] == "Read(docs/**)"
    assert out[5]["decision"] == "deny" and "file_path" in out[5]["reason"]
    assert out[6]["decision"] == "deny" and "no tool named 'NoSuchTool'" in out[6]["reason"]
    for line in out:
        if "error" not in line:
            assert set(line) == {"decision", "read_only", "reason", "rule"}


def test_check_explains_bash_commands(project: Path) -> None:
    commands = [
        "git log --oneline",
        "git log; touch pwned",
        "git log --output=f",
        "ls",
        "cat /etc/passwd",
        "curl -s x.io",
    ]
    proc = toolgate(
        "permissions", "check", "--workspace", str(project), "--allow", "Bash(git log:*)", "--sandbox", "off",
        stdin=jsonl([{"tool": "Bash", "input": {"command": c}} for c in commands]),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    decisions = [json.loads(line)["decision"] for line in proc.stdout.splitlines()]
    assert decisions == ["allow", "ask", "ask", "allow", "ask", "ask"]


def test_check_reads_the_settings_files_and_reports_problems(project: Path) -> None:
    settings = project / ".toolgate" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Read(a.txt)", "Read(!x)"], "defaultMode": "plan"}}))
    proc = toolgate(
        "permissions",
        "check",
        "--workspace",
        str(project),
        stdin=jsonl([{"tool": "Read", "input": {"file_path": "a.txt"}}]),
    )
    assert json.loads(proc.stdout)["rule"] == "Read(a.txt)"
    assert "'Read(!x)' is not a valid rule: negated patterns" in proc.stderr


def test_bad_command_line_rules_stop_the_command(project: Path, tmp_path: Path) -> None:
    proc = toolgate("permissions", "check", "--workspace", str(project), "--deny", "Bash(rm -rf")
    assert proc.returncode == 2 and "--deny 'Bash(rm -rf' is not a valid rule" in proc.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"permissions": {\n "allow": [1]}}')
    proc = toolgate("permissions", "list", "--workspace", str(project), "--settings", str(broken))
    assert proc.returncode == 2 and "line 2" in proc.stderr and "permissions.allow.0" in proc.stderr
    proc = toolgate("run-tools", "--workspace", str(project), "--settings", str(tmp_path / "absent.json"))
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_list_shows_rules_with_their_sources(project: Path, tmp_path: Path) -> None:
    flags = tmp_path / "ci.json"
    flags.write_text(json.dumps({"permissions": {"allow": ["Read(docs/**)"]}}))
    local = project / ".toolgate" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"], "defaultMode": "acceptEdits"}}))
    args = ["permissions", "list", "--workspace", str(project), "--allow", "Bash(python:*)", "--settings", str(flags)]
    args.append("--trust-workspace")
    proc = toolgate(*args)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:2] == ["mode: acceptEdits", "workspace: trusted"]
    assert any(line.startswith("deny ") and "Bash(rm:*)" in line and str(local) in line for line in lines)
    assert any("Read(docs/**)" in line and str(flags) in line for line in lines)
    assert any("warning:" in line and "any code" in line for line in lines)
    data = json.loads(toolgate(*args, "--json", "--permission-mode", "plan").stdout)
    assert data["mode"] == "plan"
    assert {(r["rule"], r["source"]) for r in data["rules"]} == {
        ("Bash(rm:*)", "local"),
        ("Bash(python:*)", "cli"),
        ("Read(docs/**)", "flag"),
    }


def run_tools(project: Path, uses: list[dict[str, Any]], *args: str) -> list[dict[str, Any]]:
    proc = toolgate("run-tools", "--workspace", str(project), *args, stdin=jsonl(uses))
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def read(id_: str, path: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": "Read", "input": {"file_path": path}}


def test_run_tools_rule_flags_mean_what_they_say(project: Path, tmp_path: Path) -> None:
    outside = str(tmp_path / "outside.txt")
    out = run_tools(project, [read("1", outside), read("2", "a.txt")], "--allow", f"Read(/{tmp_path}/**)")
    assert out[0]["content"] == "1\to" and out[1]["content"] == "1\ta"

    out = run_tools(project, [read("1", "a.txt"), read("2", ".env")], "--deny", "Read(./.env)")
    assert out[0]["content"] == "1\ta"
    assert out[1]["is_error"] and "denied by the rule `Read(./.env)`" in out[1]["content"]

    out = run_tools(project, [read("1", "a.txt")], "--ask", "Read", "--permission-mode", "bypassPermissions")
    assert out[0]["is_error"] and "non-interactive" in out[0]["content"]

    settings = tmp_path / "ci.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Read(outside.txt)"]}}))  # relative to its own dir
    out = run_tools(project, [read("1", outside)], "--settings", str(settings))
    assert out[0]["content"] == "1\to"


def test_run_tools_uses_the_settings_default_mode(project: Path, tmp_path: Path) -> None:
    local = project / ".toolgate" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"permissions": {"defaultMode": "bypassPermissions"}}))
    outside = str(tmp_path / "outside.txt")
    assert run_tools(project, [read("1", outside)], "--trust-workspace")[0]["content"] == "1\to"
    assert run_tools(project, [read("1", outside)], "--trust-workspace", "--permission-mode", "default")[0]["is_error"]
    assert run_tools(project, [read("1", outside)])[0]["is_error"]  # an untrusted workspace's file cannot


def bash_use(id_: str, command: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": "Bash", "input": {"command": command}}


def test_run_tools_bash_runs_only_what_the_rules_allow(project: Path) -> None:
    out = run_tools(
        project,
        [
            bash_use("1", "touch made.txt"),
            bash_use("2", "touch other.txt"),
            bash_use("3", "touch made.txt && touch sneaky.txt"),
            bash_use("4", "echo hi"),
            bash_use("5", "rm a.txt"),
        ],
        "--allow", "Bash(touch:*)", "--allow", "Edit(/made.txt)", "--deny", "Bash(rm:*)", "--sandbox", "off",
    )  # fmt: skip
    assert not out[0]["is_error"] and (project / "made.txt").exists()
    assert out[1]["is_error"] and "other.txt" in out[1]["content"] and not (project / "other.txt").exists()
    assert out[2]["is_error"] and not (project / "sneaky.txt").exists()
    assert out[3]["content"].strip() == "hi"
    assert out[4]["is_error"] and "denied by the rule `Bash(rm:*)`" in out[4]["content"]
    assert (project / "a.txt").exists()

    out = run_tools(
        project, [bash_use("1", "rm a.txt")], "--permission-mode", "bypassPermissions", "--deny", "Bash(rm)"
    )
    assert not out[0]["is_error"] and not (project / "a.txt").exists()  # an exact rule is that command only... and
    # `rm a.txt` is not `rm`: bypass lets it run.


def test_trust_makes_a_workspace_s_own_settings_apply(project: Path, tmp_path: Path) -> None:
    marker = project / "hook-ran"  # hooks run in the session's sandbox: they write where a Bash command could
    settings = project / ".toolgate" / "settings.json"
    settings.parent.mkdir()
    hook = {"matcher": "*", "hooks": [{"type": "command", "command": f"touch {marker}"}]}
    allow = [f"Read(/{tmp_path}/**)"]
    settings.write_text(json.dumps({"permissions": {"allow": allow}, "hooks": {"PreToolUse": [hook]}}))
    outside = str(tmp_path / "outside.txt")

    # Untrusted: the file's allow rule and hook are ignored, and stderr says what to do about it.
    proc = toolgate("run-tools", "--workspace", str(project), stdin=jsonl([read("1", outside)]))
    assert json.loads(proc.stdout)["is_error"] and not marker.exists()
    assert "ignored its 1 allow rule and 1 hook" in proc.stderr and f"toolgate trust {project}" in proc.stderr
    assert "workspace: not trusted" in toolgate("permissions", "list", "--workspace", str(project)).stdout

    proc = toolgate("trust", str(project))
    assert proc.returncode == 0 and f"Trusted {project}" in proc.stdout
    assert toolgate("trust", str(project)).stdout.strip() == f"{project} was already trusted."
    assert toolgate("trust", "--list").stdout.splitlines() == [str(project)]
    proc = toolgate("run-tools", "--workspace", str(project), stdin=jsonl([read("1", outside)]))
    # The allow rule applies now; the hook's command was never reviewed, so it waits (hash trust, on top).
    assert json.loads(proc.stdout)["content"] == "1\to" and not marker.exists()
    assert f"the PreToolUse hook `touch {marker}` is new or changed" in proc.stderr
    assert "toolgate hooks trust" in proc.stderr
    assert toolgate("hooks", "trust", "--all", "--workspace", str(project)).returncode == 0
    proc = toolgate("run-tools", "--workspace", str(project), stdin=jsonl([read("1", outside)]))
    assert json.loads(proc.stdout)["content"] == "1\to" and marker.exists() and proc.stderr == ""

    assert "no longer trusted" in toolgate("trust", "--remove", str(project)).stdout
    assert "workspace: not trusted" in toolgate("permissions", "list", "--workspace", str(project)).stdout
    assert toolgate("trust", str(tmp_path / "missing")).returncode == 2
