"""A scripted stand-in for `toolgate serve`, for end-to-end tests of the extension's UI in a real VS Code.

It speaks the protocol the extension expects (the sidecar's methods and the chat methods of issue 8, whose events
have the shapes of server/toolgate/agent/events.py, over pygls/LSP framing on stdio) and plays one scripted turn
per prompt keyword, so the tests can drive approval cards and diff reviews before the sidecar serves the agent.
Every answer it receives from the editor is appended as a JSON line to the file named by TOOLGATE_FAKE_LOG, for
the tests to check.

- a prompt containing "run": a Bash call that needs approval; live output when allowed
- a prompt containing "edit": an Edit of src/greet.py reviewed as a diff; the file is written only on accept
- a prompt containing "todo": a todo list update
- a prompt containing "wait": a call that runs until interrupted
- a prompt containing "grow" (with "run"): a 12-item todo list arrives while the approval card waits
- a prompt containing "long": a reply with a long unbroken URL and a 40-line code block
- a prompt containing "refuse the key": the provider refuses the API key (an auth error)

TOOLGATE_FAKE_START_DELAY (seconds) holds back the answer to `initialize`, like a slow sidecar start. Each process
logs its pid ("started") so that a test can kill it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from pygls.lsp.server import LanguageServer

server = LanguageServer("toolgate-fake", "0.0.0-fake")
LOG = Path(os.environ.get("TOOLGATE_FAKE_LOG", os.devnull))
interrupted: dict[str, asyncio.Event] = {}
calls = iter(range(1, 1_000_000))
sessions: list[dict[str, Any]] = []


def plain(value: Any) -> Any:
    """pygls hands untyped params over as named tuples: turn them back into JSON-like values."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def record(kind: str, payload: Any) -> None:
    with LOG.open("a") as log:
        log.write(json.dumps({"kind": kind, "payload": plain(payload)}) + "\n")


def event(session_id: str, body: dict[str, Any]) -> None:
    server.protocol.notify("toolgate/chat/event", {"sessionId": session_id, "event": body})


def started(session_id: str, tool_use_id: str, name: str, summary: str) -> None:
    body = {"type": "tool_call_started", "tool_use_id": tool_use_id, "name": name, "input": {}, "summary": summary}
    event(session_id, body)


def finished(session_id: str, tool_use_id: str, summary: str, *, error: bool = False, result: str = "") -> None:
    tool_result = {"type": "tool_result", "tool_use_id": tool_use_id, "content": result, "is_error": error}
    body = {"type": "tool_call_finished", "tool_use_id": tool_use_id, "name": "", "is_error": error}
    event(session_id, {**body, "summary": summary, "result": tool_result})


def progress(session_id: str, tool_use_id: str, text: str) -> None:
    event(session_id, {"type": "tool_call_progress", "tool_use_id": tool_use_id, "kind": "stdout", "text": text})


def workspace() -> Path:
    folders = server.workspace.folders
    for folder in folders.values():
        return Path(folder.uri.removeprefix("file://"))
    return Path.cwd()


@server.feature("toolgate/session/new")
def session_new(params: Any) -> dict[str, Any]:
    request = plain(params)
    number = len(sessions) + 1
    info = {
        "sessionId": f"fake-{number}",
        "workspace": str(workspace()),
        "mode": request.get("mode", "default"),
        "reviewEdits": request.get("reviewEdits", "when_asking"),
        "title": f"Fake session {number}",
        "createdAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-01T00:00:00Z",
        "live": True,
    }
    sessions.append(info)
    record("sessionNew", request)
    return info


@server.feature("toolgate/session/load")
def session_load(params: Any) -> dict[str, Any]:
    session_id = plain(params)["sessionId"]
    for info in sessions:
        if info["sessionId"] == session_id:
            return info
    raise ValueError(f"no session {session_id}")


@server.feature("toolgate/chat/history")
def chat_history(params: Any) -> dict[str, Any]:
    return {"messages": [], "todos": [], "busy": False}


@server.feature("toolgate/provider/configure")
def provider_configure(params: Any) -> dict[str, Any]:
    request = plain(params)
    record("providerConfigure", request)
    provider = request.get("provider") or "anthropic"
    return {
        "provider": provider,
        "model": request.get("model") or "fake-model",
        "baseUrl": request.get("baseUrl"),
        "hasKey": True,
        "message": f"Ready: {provider} model fake-model.",
    }


@server.feature("toolgate/session/list")
def session_list(params: Any) -> dict[str, Any]:
    return {"sessions": sessions}


@server.feature("toolgate/mcp/servers")
def mcp_servers(params: Any) -> dict[str, Any]:
    # The extension lists a new session's MCP servers (to offer an approval); the fake has none.
    return {"servers": [], "problems": [], "workspaceTrusted": True}


@server.feature("toolgate/settings/setMode")
def set_mode(params: Any) -> None:
    record("setMode", params)


@server.feature("toolgate/settings/addRule")
def add_rule(params: Any) -> dict[str, Any]:
    request = plain(params)
    record("addRule", request)
    settings = {"sessionId": request["sessionId"], "mode": "default", "reviewEdits": "when_asking", "rules": []}
    settings |= {"settingsFiles": {}, "flagFiles": [], "problems": []}
    covers = True if request.get("call") else None  # the real sidecar checks the waiting call against the rules
    return {"changed": True, "file": None, "warnings": [], "coversCall": covers, "settings": settings}


@server.feature("toolgate/permissions/check")
def permissions_check(params: Any) -> dict[str, Any]:
    record("permissionsCheck", params)
    return {"decision": "allow", "readOnly": False, "reason": "a rule allows it", "rule": None}


@server.feature("toolgate/chat/interrupt")
def interrupt(params: Any) -> None:
    record("interrupt", params)
    interrupted.setdefault(plain(params)["sessionId"], asyncio.Event()).set()


@server.feature("toolgate/chat/send")
async def send(params: Any) -> dict[str, Any]:
    request = plain(params)
    session_id, text = request["sessionId"], request["text"]
    stop = interrupted.setdefault(session_id, asyncio.Event())
    stop.clear()
    for word in ["Working ", "on **", "it**", "."]:
        event(session_id, {"type": "text_delta", "text": word})
        await asyncio.sleep(0.02)
    if "todo" in text:
        todos = [
            {"id": "1", "content": "Read the greeting", "status": "completed"},
            {"id": "2", "content": "Fix the empty name", "status": "in_progress"},
            {"id": "3", "content": "Run the tests", "status": "pending"},
        ]
        event(session_id, {"type": "todo_update", "todos": todos})
    if "long" in text:
        url = "https://example.com/" + "averylongpathsegment" * 15
        code = "".join(f"print('line {n}')\n" for n in range(1, 41))
        event(session_id, {"type": "text_delta", "text": f"\n\nSee {url} and this code:\n\n```python\n{code}```\n"})
    if "refuse the key" in text:
        message = "The provider refused the API key (401 from https://api.anthropic.com/v1/messages)."
        event(session_id, {"type": "error", "kind": "auth", "message": message})
    if "run" in text:
        await run_bash(session_id, grow_todos="grow" in text)
    if "edit" in text:
        await edit_file(session_id)
    if "wait" in text:
        tool_use_id = f"toolu_wait_{next(calls)}"
        started(session_id, tool_use_id, "Bash", "sleep 600")
        await stop.wait()
        finished(session_id, tool_use_id, "Interrupted", error=True)
        return {"stopReason": "interrupted"}
    event(session_id, {"type": "turn_end", "stop_reason": "end_turn", "requests": 1, "usage": {}})
    return {"stopReason": "end_turn"}


async def run_bash(session_id: str, *, grow_todos: bool = False) -> None:
    tool_use_id = f"toolu_bash_{next(calls)}"
    started(session_id, tool_use_id, "Bash", "pytest -q")
    request = asyncio.ensure_future(
        server.protocol.send_request_async(
            "toolgate/approval/request",
            {
                "sessionId": session_id,
                "toolUseId": tool_use_id,
                "toolName": "Bash",
                "input": {"command": "pytest -q"},
                "summary": "pytest -q",
                "reason": "No rule allows Bash(pytest -q) yet, and it runs code from the workspace.",
                "suggestions": [
                    {"rule": "Bash(pytest -q)", "scope": "local"},
                    {"rule": "Bash(pytest:*)", "scope": "project"},
                ],
            },
        )
    )
    if grow_todos:
        await asyncio.sleep(0.5)  # the card is on screen; then the list below the transcript grows
        todos = [{"id": str(n), "content": f"Step {n} of the plan", "status": "pending"} for n in range(1, 13)]
        event(session_id, {"type": "todo_update", "todos": todos})
    answer = plain(await request)
    record("approval", answer)
    if answer["decision"] != "allow":
        feedback = answer.get("feedback") or ""
        summary = f"Denied by the user: {feedback}" if feedback else "Denied by the user"
        finished(session_id, tool_use_id, summary, error=True)
        return
    for line in ["collecting ...\n", "..F\n", "2 passed, 1 failed\n"]:
        progress(session_id, tool_use_id, line)
        await asyncio.sleep(0.05)
    finished(session_id, tool_use_id, "exit status 1", result="2 passed, 1 failed")


async def edit_file(session_id: str) -> None:
    tool_use_id = f"toolu_edit_{next(calls)}"
    path = workspace() / "src" / "greet.py"
    original = path.read_text()
    proposed = original.replace('return f"Hello, {name}!"', "return f\"Hello, {name or 'world'}!\"")
    started(session_id, tool_use_id, "Edit", "src/greet.py")
    answer = plain(
        await server.protocol.send_request_async(
            "toolgate/diff/review",
            {
                "sessionId": session_id,
                "toolUseId": tool_use_id,
                "toolName": "Edit",
                "title": "Edit src/greet.py",
                "reason": "Edits ask before they are applied in the default mode.",
                "files": [{"path": str(path), "original": original, "proposed": proposed}],
                "suggestions": [],
            },
        )
    )
    record("review", answer)
    if answer["decision"] != "accept":
        finished(session_id, tool_use_id, "Rejected", error=True)
        return
    final = answer["files"][0]["content"]
    path.write_text(final)  # what the real sidecar does after its staleness re-check
    summary = "Applied with the user's changes" if final != proposed else "Applied"
    finished(session_id, tool_use_id, summary)


if __name__ == "__main__":
    print("fake toolgate sidecar starting", file=sys.stderr)
    record("started", {"pid": os.getpid()})
    time.sleep(float(os.environ.get("TOOLGATE_FAKE_START_DELAY", "0")))
    server.start_io()
