"""Notification hooks fire while an approval card waits in the editor; the answer stops the ones still running.

The editor is a fake channel (the boundary); the approver, the engine and the hooks (real shell commands) are real.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.unit.permissions.helpers import make_runtime

from toolgate.runtime import Runtime
from toolgate.sidecar.approvals import EditorApprover
from toolgate.sidecar.protocol import ApprovalResult, WireModel
from toolgate.testing import run1


class Editor:
    """Answers every approval with allow, once `ready()` says so."""

    def __init__(self, ready: Callable[[], bool]) -> None:
        self.ready = ready
        self.asked: list[WireModel] = []

    async def request(self, method: str, params: WireModel, result: type[Any]) -> Any:
        self.asked.append(params)
        await until(self.ready)
        return ApprovalResult(decision="allow")


async def until(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    """Wait (with a deadline) for a condition nothing signals: a file a hook writes, a process ending."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        await anyio.sleep(0.02)


def user_hooks(command: str) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"matcher": "approval", "hooks": [{"type": "command", "command": command}]}
    path.write_text(json.dumps({"hooks": {"Notification": [entry]}}))


@pytest.fixture
async def runtimes() -> AsyncIterator[list[Runtime]]:
    made: list[Runtime] = []
    yield made
    for rt in made:
        await rt.aclose()


async def test_a_waiting_approval_fires_the_notification_hook(
    workspace: Path, tmp_path: Path, runtimes: list[Runtime]
) -> None:
    log = tmp_path / "notified.json"
    user_hooks(f"cat > {log}.part && mv {log}.part {log}")
    editor = Editor(log.exists)  # the person answers only after the notification arrived
    rt = make_runtime(workspace, read_settings=True, approver=EditorApprover(editor))
    runtimes.append(rt)
    result = await run1(rt, "Gadget")
    assert result.content == "Gadget ran" and len(editor.asked) == 1
    notified = json.loads(log.read_text())
    assert notified["hook_event_name"] == "Notification" and notified["kind"] == "approval"
    assert notified["tool_name"] == "Gadget" and notified["tool_use_id"] == result.tool_use_id
    assert notified["message"].startswith("Gadget waits for your approval")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return any(line.startswith("State:") and "Z" in line for line in handle)
    except FileNotFoundError:
        return True


async def test_the_answer_stops_a_notification_hook_still_running(
    workspace: Path, tmp_path: Path, runtimes: list[Runtime]
) -> None:
    pid_file = tmp_path / "hook.pid"
    user_hooks(f"cat >/dev/null; sleep 300 & echo $! > {pid_file}; wait")
    rt = make_runtime(workspace, read_settings=True, approver=EditorApprover(Editor(pid_file.exists)))
    runtimes.append(rt)
    started = time.monotonic()
    assert (await run1(rt, "Gadget")).content == "Gadget ran"
    assert time.monotonic() - started < 60  # not the hook's 60 s timeout, nor its 300 s sleep
    pid = int(pid_file.read_text())
    await until(lambda: _gone(pid), seconds=10)
