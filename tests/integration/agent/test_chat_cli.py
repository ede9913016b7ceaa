"""`toolgate chat --print` as a real subprocess against the mock model, including crashes and resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.agent.chat_process import Chat, anthropic_env

from toolgate.mockmodel import MockModelServer

GATE_CHAT = Path(__file__).with_name("gate_chat.py")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return {**clean, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONUNBUFFERED": "1"}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture(autouse=True)
def files(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")


@pytest.fixture
def chats() -> Iterator[list[Chat]]:
    started: list[Chat] = []
    yield started
    for chat in started:
        chat.close()


def answering(chats: list[Chat], args: list[str], env: dict[str, str]) -> tuple[Chat, str]:
    """A `--output-format stream-json` chat, once it streams its answer; with its session id."""
    chat = Chat(args, env)
    chats.append(chat)
    session_id = ""
    for line in chat.lines():
        session_id = session_id or line.get("session_id", "")
        if line["type"] == "text_delta":
            return chat, session_id
    raise AssertionError(f"the chat ended before it answered: {chat.finish()}")


def test_text_output(env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]) -> None:
    steps = [
        {"text": "Reading.", "tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
        {"text": "It says alpha."},
    ]
    with MockModelServer(steps) as mock:
        chat = Chat(
            ["What is in a.txt?", "--workspace", str(workspace), "--data-dir", str(data_dir)], anthropic_env(env, mock)
        )
        chats.append(chat)
        code, out, err = chat.finish()
    assert code == 0, err
    assert out == "It says alpha.\n"
    assert "· Read a.txt" in err
    headers = mock.requests[0].headers  # the SDK read the key from the environment
    assert "test-key" in headers.get("x-api-key", "") + headers.get("authorization", "")
    [session] = list((data_dir / "sessions").iterdir())
    meta = json.loads((session / "meta.json").read_text())
    assert meta["workspace"] == str(workspace) and meta["title"] == "What is in a.txt?"
    assert "test-key" not in "".join(p.read_text() for p in session.iterdir() if p.is_file())


def test_stream_json_with_an_openai_compatible_server(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    steps = [{"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}, {"text": "alpha!"}]
    with MockModelServer(steps) as mock:
        run_env = {**env, "OPENAI_BASE_URL": mock.openai_url}  # no key: a local server needs none
        args = ["read a", "--provider", "openai", "--model", "local-model", "--output-format", "stream-json"]
        chat = Chat([*args, "--workspace", str(workspace), "--data-dir", str(data_dir)], run_env)
        chats.append(chat)
        code, out, err = chat.finish()
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["type"] == "init" and lines[0]["provider"] == "openai" and lines[0]["model"] == "local-model"
    assert lines[-1] == {
        "type": "result",
        "session_id": lines[0]["session_id"],
        "stop_reason": "end_turn",
        "text": "alpha!",
    }
    kinds = [line["type"] for line in lines]
    assert kinds.index("tool_call_started") < kinds.index("tool_call_finished") < kinds.index("turn_end")
    finished = next(line for line in lines if line["type"] == "tool_call_finished")
    assert finished["result"]["content"] == "1\talpha"
    assert mock.requests[0].json["model"] == "local-model"


def test_resume_after_a_crash_while_a_tool_runs(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    steps = [{"text": "Waiting.", "tool_uses": [{"name": "Gate", "input": {}}]}, {"text": "The gate call was lost."}]
    with MockModelServer(steps) as mock:
        run_env = anthropic_env(env, mock)
        common = ["--workspace", str(workspace), "--data-dir", str(data_dir), "--output-format", "stream-json"]
        first = Chat(["go through the gate", *common], run_env, program=[sys.executable, str(GATE_CHAT)])
        chats.append(first)
        session_id = ""
        for line in first.lines():
            session_id = session_id or line.get("session_id", "")
            if line["type"] == "tool_call_started":
                first.kill()  # the assistant's tool_use is on disk; its result never will be
                break
        first.close()

        second = Chat(["What happened?", "--resume", session_id, *common], run_env)
        chats.append(second)
        code, out, err = second.finish()
        assert code == 0, err
        assert json.loads(out.splitlines()[-1])["text"] == "The gate call was lost."
        request = mock.requests[1]
        assert request.status == 200, request.rejection
        [lost] = [b for b in request.json["messages"][2]["content"] if b["type"] == "tool_result"]
        assert lost["is_error"] and "session stopped" in lost["content"]
    transcript = (data_dir / "sessions" / session_id / "transcript.jsonl").read_text()
    assert [json.loads(line)["type"] for line in transcript.splitlines()].count("repair") == 1


def test_resume_after_a_crash_while_streaming(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    with MockModelServer([{"text": "Let me th", "hang": True}, {"text": "Here I am."}]) as mock:
        run_env = anthropic_env(env, mock)
        common = ["--workspace", str(workspace), "--data-dir", str(data_dir), "--output-format", "stream-json"]
        first, session_id = answering(chats, ["first question", *common], run_env)
        first.close()  # killed while it streams

        second = Chat(["second question", "--resume", session_id, *common], run_env)
        chats.append(second)
        code, _, err = second.finish()
        assert code == 0, err
        assert mock.requests[1].status == 200, mock.requests[1].rejection
        [message] = mock.requests[1].json["messages"]
        assert [b["text"] for b in message["content"]] == ["first question", "second question"]


def test_sigint_interrupts_and_records_it(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    with MockModelServer([{"text": "Long answer", "hang": True}]) as mock:
        common = ["--workspace", str(workspace), "--data-dir", str(data_dir), "--output-format", "stream-json"]
        chat = Chat(["tell me", *common], anthropic_env(env, mock))
        chats.append(chat)
        for line in chat.lines():
            if line["type"] == "text_delta":
                chat.kill(signal.SIGINT)
                break
        code, out, _ = chat.finish()
        assert mock.wait_for(lambda m: m.requests[0].disconnected)
    assert code == 130
    assert json.loads(out.splitlines()[-1])["stop_reason"] == "interrupted"
    [session] = list((data_dir / "sessions").iterdir())
    entries = [json.loads(line)["type"] for line in (session / "transcript.jsonl").read_text().splitlines()]
    assert entries == ["message", "message", "message", "interrupt"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["hi", "--allow", "Bash(oops"], "--allow 'Bash(oops' is not a valid rule"),
        (["hi", "--resume", "nope"], "cannot resume: there is no session nope"),
    ],
)
def test_usage_errors(env: dict[str, str], data_dir: Path, chats: list[Chat], args: list[str], words: str) -> None:
    chat = Chat([*args, "--data-dir", str(data_dir)], {**env, "ANTHROPIC_API_KEY": "k"})
    chats.append(chat)
    code, _, err = chat.finish()
    assert code == 2 and words in err


@pytest.mark.parametrize(
    ("flags", "expected", "words"),
    [
        (["--permission-mode", "default"], "alpha\n", "non-interactive"),
        (["--permission-mode", "bypassPermissions"], "omega\n", ""),
        (["--allow", "Edit(/a.txt)"], "omega\n", ""),
        (["--permission-mode", "bypassPermissions", "--deny", "Edit"], "alpha\n", "denied by the rule `Edit`"),
    ],
)
def test_edits_follow_the_permission_mode_and_rules(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat], flags: list[str], expected: str, words: str
) -> None:
    edit = {"file_path": "a.txt", "old_string": "alpha", "new_string": "omega"}
    steps = [
        {"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
        {"tool_uses": [{"name": "Edit", "input": edit}]},
        {"text": "Done."},
    ]
    with MockModelServer(steps) as mock:
        args = ["rename", "--workspace", str(workspace), "--data-dir", str(data_dir), *flags]
        chat = Chat(args, anthropic_env(env, mock))
        chats.append(chat)
        code, out, err = chat.finish()
        assert code == 0, err
        assert out == "Done.\n"
        [result] = [b for b in mock.requests[2].json["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert (workspace / "a.txt").read_text() == expected
    assert result.get("is_error", False) == bool(words)
    assert words in str(result["content"])


def test_while_a_chat_runs_its_session_cannot_be_resumed_or_rewound_elsewhere(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat]
) -> None:
    with MockModelServer([{"text": "Let me th", "hang": True}, {"text": "Here I am."}]) as mock:
        run_env = anthropic_env(env, mock)
        common = ["--workspace", str(workspace), "--data-dir", str(data_dir), "--output-format", "stream-json"]
        first, session_id = answering(chats, ["first question", *common], run_env)  # appending to its transcript

        transcript = data_dir / "sessions" / session_id / "transcript.jsonl"
        said = transcript.read_bytes()
        second = Chat(["second question", "--resume", session_id, *common], run_env)
        chats.append(second)
        code, _, err = second.finish()
        assert code == 1
        assert f"open in another toolgate process (toolgate chat, pid {first.process.pid}" in err
        assert "cannot be resumed now" in err
        rewind = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolgate",
                "rewind",
                "--session",
                session_id,
                "--to",
                "000001",
                "--conversation",
                "--data-dir",
                str(data_dir),
            ],
            env=run_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert rewind.returncode == 1 and "cannot be rewound now" in rewind.stderr, rewind.stderr
        assert transcript.read_bytes() == said  # neither touched the running chat's transcript
        assert len(mock.requests) == 1

        first.close()  # killed: the kernel lets go of its lease
        third = Chat(["second question", "--resume", session_id, *common], run_env)
        chats.append(third)
        code, _, err = third.finish()
        assert code == 0, err


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_an_answer_the_locale_cannot_encode_is_printed_not_a_crash(
    env: dict[str, str], data_dir: Path, workspace: Path, chats: list[Chat], output_format: str
) -> None:
    # Under an ASCII stdout, printing "café ✓" ended the chat with a UnicodeEncodeError.
    steps = [{"text": "It says café ✓."}]
    with MockModelServer(steps) as mock:
        args = ["What is in a.txt?", "--output-format", output_format]
        chat = Chat(
            [*args, "--workspace", str(workspace), "--data-dir", str(data_dir)],
            anthropic_env({**env, "PYTHONIOENCODING": "ascii"}, mock),
        )
        chats.append(chat)
        code, out, err = chat.finish()
    assert code == 0, err
    if output_format == "text":
        assert out == "It says caf\\xe9 \\u2713.\n"  # escaped where ASCII cannot show it
    else:
        lines = [json.loads(line) for line in out.splitlines()]  # UTF-8 JSON Lines whatever the locale
        assert "It says café ✓." in "".join(line.get("text", "") for line in lines if line["type"] == "text_delta")
