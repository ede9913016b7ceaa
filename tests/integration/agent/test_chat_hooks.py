"""Hooks of the whole session through `toolgate chat --print` and the mock model: real processes, real hooks.

The hooks append their stdin (one JSON object per line) to a log in the workspace, which is writable for them
whether or not the session's sandbox is on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.integration.agent.chat_process import Chat, anthropic_env

from toolgate.mockmodel import MockModelServer
from toolgate.permissions.hooks.events import EVENT_FIELDS, HOOK_EVENTS

COMMON_FIELDS = {"hook_event_name", "event", "session_id", "cwd", "transcript_path", "permission_mode"}
LOG = "hooks.log"
LOGGER = f'cat >> "$TOOLGATE_PROJECT_DIR/{LOG}"; echo >> "$TOOLGATE_PROJECT_DIR/{LOG}"'


def log_then(shell: str) -> str:
    """A hook that logs its stdin, then runs `shell` (which sees the payload as $payload)."""
    return f'payload=$(cat); printf "%s\\n" "$payload" >> "$TOOLGATE_PROJECT_DIR/{LOG}"; {shell}'


def target(entry: dict[str, Any]) -> str | None:
    tool_input = entry.get("tool_input", {})
    return tool_input.get("file_path") or tool_input.get("command")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    return {**clean, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONUNBUFFERED": "1"}


@pytest.fixture
def user_settings() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "settings.json"


@pytest.fixture
def chats() -> Iterator[list[Chat]]:
    started: list[Chat] = []
    yield started
    for chat in started:
        chat.close()


def hooks_of(events: dict[str, str | list[dict[str, Any]]]) -> dict[str, Any]:
    """{"hooks": ...} with one command per event (or the event's entries as they are)."""
    return {
        "hooks": {
            event: spec
            if isinstance(spec, list)
            else [{"matcher": "*", "hooks": [{"type": "command", "command": spec}]}]
            for event, spec in events.items()
        }
    }


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def logged(workspace: Path) -> list[dict[str, Any]]:
    log = workspace / LOG
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []


def run_chat(
    chats: list[Chat], steps: list[dict[str, Any]], env: dict[str, str], workspace: Path, *args: str
) -> tuple[int, str, str, MockModelServer]:
    with MockModelServer(steps) as mock:
        chat = Chat(
            [*args, "--workspace", str(workspace), "--data-dir", str(workspace.parent / "data")],
            anthropic_env(env, mock),
        )
        chats.append(chat)
        code, out, err = chat.finish()
    return code, out, err, mock


def test_every_event_fires_once_where_it_should_with_the_documented_fields(
    env: dict[str, str], workspace: Path, user_settings: Path, chats: list[Chat]
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    write_json(user_settings, hooks_of(dict.fromkeys(HOOK_EVENTS, LOGGER)))
    steps = [
        {"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
        {"tool_uses": [{"name": "Bash", "input": {"command": "ls missing.txt"}}]},
        {"tool_uses": [{"name": "Write", "input": {"file_path": "new.txt", "content": "new\n"}}]},
        {"text": "Done."},
    ]
    code, out, err, _ = run_chat(chats, steps, env, workspace, "look around")
    assert code == 0 and out == "Done.\n", err
    entries = logged(workspace)
    assert [(e["hook_event_name"], target(e)) for e in entries] == [
        ("SessionStart", None),
        ("UserPromptSubmit", None),
        ("PreToolUse", "a.txt"),
        ("PostToolUse", "a.txt"),
        ("PreToolUse", "ls missing.txt"),
        ("PostToolUseFailure", "ls missing.txt"),  # it ran, and failed
        ("PreToolUse", "new.txt"),
        ("PermissionRequest", "new.txt"),  # asked: nobody answers headless, so it was refused and never ran
        ("Stop", None),
        ("SessionEnd", None),
    ]
    [session] = list((workspace.parent / "data" / "sessions").iterdir())
    for entry in entries:
        event = entry["hook_event_name"]
        assert set(entry) == COMMON_FIELDS | set(EVENT_FIELDS[event]), event
        assert entry["event"] == event and entry["session_id"] == session.name and entry["cwd"] == str(workspace)
        assert entry["transcript_path"] == str(session / "transcript.jsonl") and entry["permission_mode"] == "default"
    by_event = {e["hook_event_name"]: e for e in entries}
    assert by_event["SessionStart"]["source"] == "new" and by_event["UserPromptSubmit"]["prompt"] == "look around"
    assert by_event["PostToolUse"]["tool_result"] == {"content": "1\talpha", "is_error": False}
    assert "missing.txt" in by_event["PostToolUseFailure"]["error"]
    assert by_event["PermissionRequest"]["reason"] and by_event["Stop"]["continuations"] == 0
    assert by_event["Stop"]["stop_reason"] == "end_turn" and by_event["SessionEnd"]["reason"] == "exit"
    assert not (workspace / "new.txt").exists()

    (workspace / LOG).unlink()
    code, _, err, _ = run_chat(chats, [{"text": "Again."}], env, workspace, "more", "--resume", session.name)
    assert code == 0, err
    assert [(e["hook_event_name"], e.get("source")) for e in logged(workspace)][:2] == [
        ("SessionStart", "resume"),
        ("UserPromptSubmit", None),
    ]


def test_a_user_prompt_submit_hook_blocks_the_prompt_with_its_reason(
    env: dict[str, str], workspace: Path, user_settings: Path, chats: list[Chat]
) -> None:
    block = "cat >/dev/null; echo 'prompts may not mention the launch codes' >&2; exit 2"
    write_json(user_settings, hooks_of({"UserPromptSubmit": block, "Stop": LOGGER}))
    code, out, err, mock = run_chat(chats, [{"text": "never sent"}], env, workspace, "the launch codes are")
    assert code == 1 and out == ""
    assert f"The UserPromptSubmit hook `{block}` (user ({user_settings})) blocked this prompt: " in err
    assert "prompts may not mention the launch codes" in err
    assert mock.requests == [] and logged(workspace) == []  # the model never saw it; no turn, so no Stop


def test_a_user_prompt_submit_hook_adds_context_for_the_model(
    env: dict[str, str], workspace: Path, user_settings: Path, chats: list[Chat]
) -> None:
    context = "printf '%s' '{\"additional_context\": \"the build is red\"}'"
    write_json(
        user_settings, hooks_of({"UserPromptSubmit": f"cat >/dev/null; {context}", "SessionStart": "echo on main"})
    )
    code, _, err, mock = run_chat(chats, [{"text": "ok"}], env, workspace, "status?")
    assert code == 0, err
    [message] = mock.requests[0].json["messages"]
    assert [b["text"] for b in message["content"]] == ["status?", "[Context added by hooks]\non main\nthe build is red"]


def test_a_stop_hook_makes_the_model_continue_once_then_lets_it_stop(
    env: dict[str, str], workspace: Path, user_settings: Path, chats: list[Chat]
) -> None:
    ask_once = log_then(
        'case "$payload" in *\'"continuations": 0\'*) '
        'printf \'%s\' \'{"decision": "continue", "reason": "run the tests first"}\';; esac'
    )
    write_json(user_settings, hooks_of({"Stop": ask_once}))
    code, out, err, mock = run_chat(chats, [{"text": "Finished."}, {"text": "Tests pass."}], env, workspace, "fix it")
    assert code == 0 and out == "Tests pass.\n", err
    assert "asked the model to continue: run the tests first" in err
    assert [e["continuations"] for e in logged(workspace)] == [0, 1]
    last = mock.requests[1].json["messages"][-1]
    assert last["role"] == "user" and "run the tests first" in last["content"][-1]["text"]


def test_stop_hooks_cannot_keep_the_model_going_forever(
    env: dict[str, str], workspace: Path, user_settings: Path, chats: list[Chat]
) -> None:
    always = "cat >/dev/null; echo 'not yet' >&2; exit 2"
    write_json(user_settings, hooks_of({"Stop": always}))
    steps = [{"text": f"answer {n}"} for n in range(6)]
    code, out, err, mock = run_chat(chats, steps, env, workspace, "go")
    assert code == 0 and out == "answer 3\n", err
    assert len(mock.requests) == 4 and "at most 3 times per turn; the turn ends here" in err


def test_a_permission_request_hook_allows_an_ask_but_never_a_deny_rule_or_a_protected_path(
    env: dict[str, str], workspace: Path, user_settings: Path, chats: list[Chat]
) -> None:
    allow = log_then('printf \'%s\' \'{"decision": "allow", "reason": "CI bot"}\'')
    write_json(user_settings, hooks_of({"PermissionRequest": allow}))
    writes = [
        ("new.txt", "asked, then allowed by the hook"),
        ("secret.txt", "deny rule"),
        (".vscode/tasks.json", "safety"),
    ]
    steps = [*({"tool_uses": [{"name": "Write", "input": {"file_path": p, "content": "x\n"}}]} for p, _ in writes)]
    code, _, err, _ = run_chat(chats, [*steps, {"text": "ok"}], env, workspace, "write", "--deny", "Edit(secret.txt)")
    assert code == 0, err
    assert (workspace / "new.txt").read_text() == "x\n"
    assert not (workspace / "secret.txt").exists() and not (workspace / ".vscode").exists()
    # Only the plain ask reached the hook: a deny rule decides before any ask, a safety check is the person's.
    assert [e["tool_input"]["file_path"] for e in logged(workspace)] == ["new.txt"]


def toolgate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolgate", *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_workspace_hook_changed_after_trust_waits_for_review(
    env: dict[str, str], workspace: Path, chats: list[Chat]
) -> None:
    project = workspace / ".toolgate" / "settings.json"
    write_json(project, hooks_of({"SessionStart": LOGGER}))
    assert toolgate("trust", str(workspace), cwd=workspace).returncode == 0
    assert toolgate("hooks", "trust", "--all", cwd=workspace).returncode == 0
    code, _, err, _ = run_chat(chats, [{"text": "one"}], env, workspace, "hi")
    assert code == 0 and [e["hook_event_name"] for e in logged(workspace)] == ["SessionStart"], err

    changed = f"{LOGGER}  # changed upstream"
    write_json(project, hooks_of({"SessionStart": changed}))
    before = project.read_bytes()
    code, _, err, _ = run_chat(chats, [{"text": "two"}], env, workspace, "hi")
    assert code == 0 and len(logged(workspace)) == 1  # the changed command did not run
    assert f"the SessionStart hook `{changed}` is new or changed" in err
    assert project.read_bytes() == before  # checking it never touched the workspace's file
    listing = toolgate("hooks", "list", cwd=workspace).stdout
    assert f"command: {changed}" in listing and "trusted: no: waiting for review" in listing
    [waiting] = [h for h in json.loads(toolgate("hooks", "list", "--json", cwd=workspace).stdout)]
    assert waiting["state"] == "waiting" and waiting["command"] == changed

    assert toolgate("hooks", "trust", waiting["id"], cwd=workspace).returncode == 0
    code, _, err, _ = run_chat(chats, [{"text": "three"}], env, workspace, "hi")
    assert code == 0 and len(logged(workspace)) == 2 and "is new or changed" not in err
    assert toolgate("hooks", "revoke", waiting["id"], cwd=workspace).returncode == 0
    assert "waiting for review" in toolgate("hooks", "list", cwd=workspace).stdout
