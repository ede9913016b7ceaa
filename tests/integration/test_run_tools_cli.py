"""`toolgate run-tools` as a real subprocess: JSON Lines in, one tool_result per tool_use out, in order."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TOOLGATE = [sys.executable, "-m", "toolgate"]


def run_tools(workspace: Path, lines: list[Any], *args: str) -> tuple[list[dict[str, Any]], str, int]:
    payload = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    proc = subprocess.run(
        [*TOOLGATE, "run-tools", "--workspace", str(workspace), *args],
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    return out, proc.stderr, proc.returncode


def tool_use(id_: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": tool_input}


def test_lines_and_batches_in_order_with_one_session(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    out, stderr, code = run_tools(
        workspace,
        [
            tool_use("1", "Read", file_path="a.txt"),
            [tool_use("2", "Read", file_path="b.txt"), tool_use("3", "Nope"), tool_use("4", "Read", file_path="a.txt")],
            "this is not json",
            [{"type": "tool_use", "name": "Read", "input": {}}, tool_use("5", "Read", file_path="b.txt", limit=1)],
            "",
        ],
    )
    assert code == 0, stderr
    kinds = [(o["type"], o.get("tool_use_id")) for o in out]
    assert kinds == [
        ("tool_result", "1"),
        ("tool_result", "2"),
        ("tool_result", "3"),
        ("tool_result", "4"),
        ("error", None),
        ("error", None),
        ("tool_result", "5"),
    ]
    assert out[0] == {"type": "tool_result", "tool_use_id": "1", "content": "1\talpha", "is_error": False}
    assert out[2]["is_error"] and "no tool named 'Nope'" in out[2]["content"]
    # Same process = same session: the second full read of a.txt is answered from readFileState.
    assert "has not changed" in out[3]["content"]
    assert "not valid JSON" in out[4]["message"]
    assert "missing or invalid id" in out[5]["message"]
    assert out[6]["content"] == "1\tbeta"


def test_asks_are_denied_with_the_rule_that_would_grant_them(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("x\n")
    out, _, code = run_tools(workspace, [tool_use("o", "Read", file_path=str(tmp_path / "outside.txt"))])
    assert code == 0 and out[0]["is_error"]
    assert "non-interactive" in out[0]["content"] and "--allow 'Read(/" in out[0]["content"]
    assert "acceptEdits" not in out[0]["content"]  # a read outside: no mode of edits would help

    # A command that writes a file: no single rule covers both, and the refusal names the mode that would.
    out, _, _ = run_tools(workspace, [tool_use("m", "Bash", command="mkdir build", outside_sandbox=True)])
    assert out[0]["is_error"] and "`--permission-mode acceptEdits` would let it run" in out[0]["content"]
    assert not (workspace / "build").exists()

    out, _, _ = run_tools(
        workspace,
        [tool_use("o", "Read", file_path=str(tmp_path / "outside.txt"))],
        "--permission-mode",
        "bypassPermissions",
    )
    assert out[0]["content"] == "1\tx"

    out, _, _ = run_tools(
        workspace, [tool_use("o", "Read", file_path=str(tmp_path / "outside.txt"))], "--add-dir", str(tmp_path)
    )
    assert out[0]["content"] == "1\tx"


def test_bad_usage_is_reported_at_start(workspace: Path) -> None:
    _, stderr, code = run_tools(workspace / "missing", [])
    assert code == 2 and "is not a directory" in stderr
    _, stderr, code = run_tools(workspace, [], "--permission-mode", "yolo")
    assert code == 2 and "invalid choice" in stderr


def test_lines_of_megabytes_arrive_whole_and_as_utf_8_whatever_the_locale(workspace: Path) -> None:
    """stdin is read in big blocks, not through the locale's text layer: a line of megabytes is one line, and
    JSON Lines are UTF-8 even where Python's stdin would decode another way (here Latin-1)."""
    content = "naïve café, ünïcode on every line\n" * 150_000  # 5 MB, so the line spans many reads
    lines = [
        tool_use("w", "Write", file_path="big.txt", content=content),
        tool_use("s", "Write", file_path="small.txt", content="déjà vu\n"),
    ]
    payload = b"".join(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n" for line in lines)
    proc = subprocess.run(
        [*TOOLGATE, "run-tools", "--workspace", str(workspace), "--permission-mode", "acceptEdits"],
        input=payload,
        capture_output=True,
        timeout=60,
        start_new_session=True,
        env={**os.environ, "PYTHONIOENCODING": "latin-1"},
    )
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["tool_use_id"] for o in out] == ["w", "s"] and not any(o["is_error"] for o in out)
    assert (workspace / "big.txt").read_bytes() == content.encode("utf-8")
    assert (workspace / "small.txt").read_bytes() == "déjà vu\n".encode()


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_results_go_out_as_utf_8_whatever_the_locale(workspace: Path, encoding: str) -> None:
    # A result quoting text the locale's encoding cannot hold ended the session with a UnicodeEncodeError.
    (workspace / "marks.txt").write_text("done ✓ 日本 café\n", encoding="utf-8")
    proc = subprocess.run(
        [*TOOLGATE, "run-tools", "--workspace", str(workspace)],
        input=(json.dumps(tool_use("r", "Read", file_path="marks.txt")) + "\n").encode(),
        capture_output=True,
        timeout=60,
        start_new_session=True,
        env={**os.environ, "PYTHONIOENCODING": encoding},
    )
    assert proc.returncode == 0, proc.stderr
    (result,) = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert not result["is_error"] and "done ✓ 日本 café" in result["content"]


@pytest.fixture
def live_session(workspace: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [*TOOLGATE, "run-tools", "--workspace", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    yield proc
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream:
            stream.close()


def test_each_line_is_answered_before_the_next_is_read(live_session: subprocess.Popen[str], workspace: Path) -> None:
    """Output is flushed per line, so a driver can hold a conversation with one process."""
    (workspace / "a.txt").write_text("alpha\n")
    assert live_session.stdin and live_session.stdout
    for i in range(3):
        live_session.stdin.write(json.dumps(tool_use(f"t{i}", "Read", file_path="a.txt", limit=1 + i)) + "\n")
        live_session.stdin.flush()
        answer = json.loads(live_session.stdout.readline())
        assert answer["tool_use_id"] == f"t{i}" and answer["content"] == "1\talpha"
    live_session.stdin.close()
    assert live_session.wait(timeout=30) == 0


def test_sigint_when_idle_ends_the_session(live_session: subprocess.Popen[str], workspace: Path) -> None:
    assert live_session.stdin and live_session.stdout
    (workspace / "a.txt").write_text("alpha\n")
    live_session.stdin.write(json.dumps(tool_use("t", "Read", file_path="a.txt")) + "\n")
    live_session.stdin.flush()
    assert json.loads(live_session.stdout.readline())["tool_use_id"] == "t"  # the handler is installed by now
    live_session.send_signal(signal.SIGINT)
    assert live_session.wait(timeout=30) == 130


@pytest.mark.parametrize("stdin", ["write-only", "closed"])
def test_a_stdin_that_cannot_be_read_ends_the_session_with_a_reason_instead_of_waiting(
    workspace: Path, stdin: str
) -> None:
    # A read that fails (stdin the write end of a pipe) or no stdin at all: the reader used to die quietly and
    # leave the session waiting forever for lines that could not come.
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.run(
            [*TOOLGATE, "run-tools", "--workspace", str(workspace)],
            stdin=write_end if stdin == "write-only" else None,
            preexec_fn=(lambda: os.close(0)) if stdin == "closed" else None,
            capture_output=True,
            text=True,
            timeout=60,
            start_new_session=True,
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    assert "toolgate run-tools: stdin could not be read" in proc.stderr
    assert proc.stdout == ""
