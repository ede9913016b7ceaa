"""The escape suite: real Bash calls through `toolgate run-tools --sandbox on` (autoAllow on, default mode),
each trying to reach the world outside the working directories. The world must be unchanged afterwards.

The attempts are written as `python3 -c` programs on purpose: the classifier cannot see what such a program
writes, so the ladder allows it only on the sandbox's account, and the sandbox alone must stop it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_run_tools_cli import TOOLGATE, tool_use
from tests.integration.test_run_tools_cli import run_tools as run_tools_cli

# Needs bwrap: `make unit` installs it (scripts/setup-e2e.sh --apt-only). Without it every case fails, on purpose.


def run_tools(workspace: Path, calls: list[dict[str, Any]], *args: str) -> list[str]:
    out, stderr, code = run_tools_cli(workspace, calls, "--sandbox", "on", *args)
    assert code == 0, stderr
    return [line["content"] for line in out]


def python(code: str) -> str:
    return f"python3 -c {shlex.quote(code)}"


def bash_call(command: str, **extra: Any) -> dict[str, Any]:
    return tool_use(f"t{uuid.uuid4().hex[:6]}", "Bash", command=command, **extra)


def run_one(workspace: Path, command: str, *args: str, **extra: Any) -> str:
    (result,) = run_tools(workspace, [bash_call(command, **extra)], *args)
    return result


def write_attempt(target: Path | str) -> str:
    return python(f"open({str(target)!r}, 'w').write('escaped')")


def assert_ran_sandboxed(result: str) -> None:
    """Allowed on the sandbox's account (not asked), and refused by it."""
    assert "needs approval" not in result, result
    signs = ("Read-only file system", "No such file or directory", "busy", "Is a directory")
    assert any(sign in result for sign in signs), result


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "victim.txt").write_text("original\n")
    return directory


def test_an_unseen_write_inside_the_workspace_runs_without_asking(workspace: Path) -> None:
    result = run_one(workspace, write_attempt(workspace / "made.txt"))
    assert "needs approval" not in result, result
    assert (workspace / "made.txt").read_text() == "escaped"


def test_without_the_sandbox_the_same_command_is_asked_about(workspace: Path) -> None:
    result = run_one(workspace, write_attempt(workspace / "made.txt"), "--sandbox", "off")
    assert "needs approval" in result
    assert not (workspace / "made.txt").exists()


@pytest.mark.parametrize("where", ["tmp", "home", "etc"])
def test_writes_outside_the_working_directories_do_not_land(workspace: Path, outside: Path, where: str) -> None:
    name = f"toolgate-escape-{uuid.uuid4().hex}"
    target = {"tmp": outside / name, "home": Path.home() / name, "etc": Path("/etc") / name}[where]
    try:
        result = run_one(workspace, write_attempt(target))
        assert "needs approval" not in result, result
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_a_symlink_in_the_workspace_does_not_lead_out(workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside)
    (workspace / "etc-link").symlink_to("/etc")
    name = f"toolgate-escape-{uuid.uuid4().hex}"
    code = f"""
for path in ('link/victim.txt', 'link/new.txt', 'etc-link/{name}'):
    try:
        open(path, 'w').write('escaped')
        print('wrote', path)
    except OSError as exc:
        print(path, exc)
"""
    result = run_one(workspace, python(code))
    assert "needs approval" not in result, result
    assert (outside / "victim.txt").read_text() == "original\n"
    assert not (outside / "new.txt").exists()
    assert not (Path("/etc") / name).exists()


def test_a_hard_link_to_an_outside_file_cannot_be_made(workspace: Path) -> None:
    # /etc/hostname is visible inside (read-only); the workspace is another mount, so link() fails (EXDEV).
    code = """
import os
try:
    os.link('/etc/hostname', 'h')
    open('h', 'a').write('x')
except OSError as e:
    print(e)
"""
    before = Path("/etc/hostname").read_bytes()
    result = run_one(workspace, python(code))
    assert "needs approval" not in result, result
    assert "cross-device" in result.lower() or "Read-only" in result or "not permitted" in result, result
    assert Path("/etc/hostname").read_bytes() == before
    assert not (workspace / "h").exists()


@pytest.mark.parametrize(
    "relative",
    [
        ".toolgate/settings.json", ".git/hooks/pre-commit", ".vscode/tasks.json", ".github/workflows/x.yml",
        ".envrc", ".mcp.json", "agents.md", "AGENTS.md", "Agents.md", "TOOLGATE.md", "CLAUDE.md", "GEMINI.md",
        ".github/copilot-instructions.md", ".devcontainer/devcontainer.json",
    ],
)  # fmt: skip
def test_protected_config_cannot_be_created_when_absent(workspace: Path, relative: str) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    shutil.rmtree(workspace / ".git" / "hooks")  # absent, like a repository cloned without sample hooks
    (workspace / ".github").mkdir()
    code = f"import os\nos.makedirs(os.path.dirname({relative!r}), exist_ok=True)\nopen({relative!r}, 'w').write('x')"
    result = run_one(workspace, python(code))
    assert_ran_sandboxed(result)
    assert not (workspace / relative).exists()
    # The empty stand-ins the sandbox mounted on are gone again.
    top = relative.split("/")[0]
    assert top in (".git", ".github") or not (workspace / top).exists()
    assert not (workspace / ".git" / "hooks").exists()


@pytest.mark.parametrize("relative", [".VSCode/tasks.json", "Agents.MD", "claude.md"])
def test_a_protected_name_in_another_case_is_read_only_when_present(workspace: Path, relative: str) -> None:
    # On a case-insensitive file system these are the protected files themselves; on Linux they are listed at
    # plan time and kept read-only all the same. (Deeper names, `.GitHub/Workflows`, are not listed: on a
    # case-insensitive file system the lookup of `.github/workflows` finds them; on Linux nothing loads them.)
    target = workspace / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("original\n")
    hidden = python(f"open(bytes.fromhex({str(target).encode().hex()!r}).decode(), 'w').write('x')")  # unseen
    result = run_one(workspace, hidden)
    assert_ran_sandboxed(result)
    assert target.read_text() == "original\n"


def test_workflows_cannot_be_made_by_making_an_absent_github_first(workspace: Path) -> None:
    code = "import os\nos.makedirs('.github/workflows', exist_ok=True)\nopen('.github/workflows/x.yml', 'w').write('x')"
    result = run_one(workspace, python(code))
    assert_ran_sandboxed(result)
    assert not (workspace / ".github").exists()  # the stand-in is gone with the session


def test_a_tool_in_a_temporary_virtualenv_is_still_found(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = tmp_path / "venv" / "bin" / "my-tool"  # tmp_path is under /tmp, which the sandbox makes private
    tool.parent.mkdir(parents=True)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool.write_text('#!/bin/sh\necho tool ran; cat "$(dirname "$0")/../pyvenv.cfg"; touch "$(dirname "$0")/x"\n')
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tool.parent}:{os.environ['PATH']}")
    result = run_one(workspace, "my-tool")
    assert "tool ran" in result and "home = /usr/bin" in result, result
    assert "Read-only file system" in result and not (tool.parent / "x").exists()
    hidden = tmp_path / "elsewhere" / "other-tool"  # in /tmp but not on PATH: not there, and the result says why
    hidden.parent.mkdir()
    hidden.write_text("#!/bin/sh\necho ran\n")
    hidden.chmod(0o755)
    result = run_one(workspace, str(hidden))
    assert "Exit code 127" in result and "not found inside the sandbox" in result, result


def test_protected_config_cannot_be_sidestepped_by_renaming_its_parent(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    code = (
        "import os, shutil\nos.rename('.git', '.git-old')\nshutil.copytree('.git-old', '.git')\n"
        "open('.git/hooks/pre-commit', 'w').write('x')"
    )
    result = run_one(workspace, python(code))
    assert "needs approval" not in result, result
    assert "busy" in result, result
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".git-old").exists()


def test_proc_self_root_is_the_sandboxes_root(workspace: Path) -> None:
    name = f"toolgate-escape-{uuid.uuid4().hex}"
    result = run_one(workspace, write_attempt(f"/proc/self/root/etc/{name}"))
    assert_ran_sandboxed(result)
    assert not (Path("/etc") / name).exists()


def test_credentials_are_not_visible_even_inside_a_writable_directory(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / ".netrc").write_text("machine x password hunter2\n")
    monkeypatch.setenv("HOME", str(home))  # run-tools inherits it
    code = """
import os
print(os.listdir(os.path.expanduser('~/.ssh')))
print(repr(open(os.path.expanduser('~/.netrc')).read()))
"""
    (result,) = run_tools(workspace, [bash_call(python(code))], "--add-dir", str(home))
    assert "needs approval" not in result, result
    assert "PRIVATE KEY" not in result and "hunter2" not in result
    assert "[]" in result and "''" in result
    assert (home / ".ssh" / "id_rsa").read_text() == "PRIVATE KEY\n"


@pytest.fixture
def loopback_server() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()
        assert not accepted, "a sandboxed command reached the test's loopback server"


def test_the_network_is_unreachable(workspace: Path, loopback_server: int) -> None:
    code = f"""
import socket
try:
    socket.create_connection(('127.0.0.1', {loopback_server}), timeout=3)
    print('CONNECTED')
except OSError as e:
    print('refused', e)
"""
    result = run_one(workspace, python(code))
    assert "needs approval" not in result, result
    assert "refused" in result and "CONNECTED" not in result


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def test_a_fork_bomb_is_bounded_by_the_timeout_and_killed_with_its_group(workspace: Path) -> None:
    marker = f"bomb{uuid.uuid4().hex[:8]}"
    # Polite on a shared machine: at most 200 processes, each sleeping; the point is that none survives.
    code = f"""
import os, time
for _ in range(200):
    if os.fork() == 0:
        os.execvp('sleep', ['sleep', '300', '{marker}'])
    time.sleep(0.005)
time.sleep(300)
"""
    started = time.monotonic()
    result = run_one(workspace, python(code), timeout=3000)
    assert "needs approval" not in result, result
    assert result.startswith("Timed out after 3.0 s"), result
    assert time.monotonic() - started < 60
    assert _processes_with(marker) == []


def test_background_commands_are_sandboxed_too(workspace: Path) -> None:
    name = f"toolgate-escape-{uuid.uuid4().hex}"
    code = f"open('inside.txt', 'w').write('ok')\nopen('/etc/{name}', 'w').write('escaped')"
    start = bash_call(python(code), run_in_background=True)
    # The session ends (and stops its background commands) when run-tools' input ends: wait inside it.
    wait = bash_call("until [ -e inside.txt ]; do sleep 0.05; done; cat inside.txt", timeout=30_000)
    results = run_tools(workspace, [start, wait])
    assert "Started in the background" in results[0], results
    assert results[1] == "ok", results
    assert not (Path("/etc") / name).exists()


def test_without_bwrap_on_path_nothing_is_allowed_on_the_sandboxes_account(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bin_dir))  # run-tools inherits it
    (result,) = run_tools(workspace, [bash_call(write_attempt(workspace / "made.txt"))])
    assert "needs approval" in result, result
    assert not (workspace / "made.txt").exists()
    status = subprocess.run(
        [*TOOLGATE, "sandbox", "status", "--workspace", str(workspace)], capture_output=True, text=True
    )
    assert status.returncode == 1
    assert "bwrap was not found" in status.stdout and "apt-get install bubblewrap" in status.stdout


def test_git_commit_works_inside_and_commits_no_stand_in(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.txt").write_text("a\n")
    command = "git add -A && git -c user.name=t -c user.email=t@t commit -q -m first && git log --stat --oneline"
    result = run_one(workspace, command)
    assert "needs approval" not in result, result
    assert "first" in result and "a.txt" in result, result
    # The stand-ins for absent `.envrc`, `.mcp.json`, `agents.md`, ... are empty directories, which git ignores.
    assert "1 file changed" in result and ".envrc" not in result and "agents.md" not in result, result


def test_the_ladder_allows_on_the_sandboxes_account_only_what_it_contains(workspace: Path) -> None:
    commands = {
        "git log; touch made": "allow",  # writes inside
        "npm test": "allow",  # runs code
        "curl -s x.io": "allow",  # the network is not there
        "cat /etc/passwd": "ask",  # reads outside: the sandbox lets commands read
        "cp notes.txt /etc/x": "ask",  # a write outside, in plain sight
        "touch .vscode/tasks.json": "ask",  # protected: safety runs first, in every mode
        "touch sub/.vscode/tasks.json": "ask",  # below the top the sandbox does not protect: the ladder asks
        "rm -rf ~": "ask",
    }
    calls = "".join(json.dumps({"tool": "Bash", "input": {"command": c}}) + "\n" for c in commands)
    deny = json.dumps({"tool": "Bash", "input": {"command": "npm publish"}}) + "\n"
    outside = json.dumps({"tool": "Bash", "input": {"command": "npm test", "outside_sandbox": True}}) + "\n"
    proc = subprocess.run(
        [
            *TOOLGATE,
            "permissions",
            "check",
            "--workspace",
            str(workspace),
            "--sandbox",
            "on",
            "--deny",
            "Bash(npm publish)",
        ],
        input=calls + deny + outside,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["decision"] for a in answers] == [*commands.values(), "deny", "ask"]
    assert "sandbox" in answers[0]["reason"]
