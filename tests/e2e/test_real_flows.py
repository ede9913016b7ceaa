"""The whole product in a real VS Code: the real sidecar runs the agent loop against the local mock model
(`python -m toolgate.mockmodel`), and the person answers from the chat: allow a command from its card, review a new
file as a diff, edit the proposal and accept it. The file on disk is the person's text, and the model is told.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codeserver import VENV_PYTHON, CodeServer, wait_for
from playwright.sync_api import expect
from workbench import Workbench

pytestmark = pytest.mark.e2e


class MockModel:
    def __init__(self, root: Path, steps: list[dict[str, Any]]) -> None:
        self.script = root / "mock-script.json"
        self.record = root / "mock-requests.jsonl"
        self.script.write_text(json.dumps({"steps": steps}))
        self.process = subprocess.Popen(
            [str(VENV_PYTHON), "-m", "toolgate.mockmodel", "--script", str(self.script), "--record", str(self.record)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, killed at the end
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()  # printed once it listens; returns "" if it died
        assert line.startswith("listening on "), f"the mock model did not start: {line!r}"
        self.url = line.removeprefix("listening on ").strip()

    def requests(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def stop(self) -> None:
        os.killpg(self.process.pid, signal.SIGTERM)
        self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def mock_model(code_server: CodeServer, workbench: Workbench) -> Iterator[MockModel]:
    workspace = code_server.workspace
    model = MockModel(
        code_server.root,
        [
            {
                "text": "I'll leave a marker file first.",
                "tool_uses": [{"name": "Bash", "input": {"command": "touch made-by-toolgate.txt"}}],
            },
            {
                "text": "Now the new module.",
                "tool_uses": [
                    {
                        "name": "Write",
                        "input": {"file_path": str(workspace / "src" / "hello.py"), "content": "print('hello')\n"},
                    }
                ],
            },
            {"text": "Both are done."},
        ],
    )
    # An OpenAI-compatible server at a base URL needs no key: the panel says so, and the chat can start.
    code_server.write_workspace_settings({"toolgate.provider": "openai", "toolgate.baseUrl": f"{model.url}/v1"})
    chat = workbench.open_chat()
    expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready")
    expect(chat.locator(".provider-status")).to_contain_text("openai · gpt")
    try:
        yield model
    finally:
        code_server.write_workspace_settings(None)
        model.stop()


def test_allow_a_command_then_accept_an_edited_new_file(
    mock_model: MockModel, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    workspace = code_server.workspace
    chat = workbench.open_chat()
    chat.get_by_role("button", name="New").click()
    composer = chat.locator(".composer-input")
    composer.fill("Leave a marker and add a hello module.")
    composer.press("Enter")

    # 1. The command needs approval: its card says why; Allow once runs it for real.
    card = chat.locator(".approval-pending").last
    expect(card).to_contain_text("touch made-by-toolgate.txt")
    expect(card.locator(".card-reason")).not_to_be_empty()
    assert not (workspace / "made-by-toolgate.txt").exists()
    workbench.shot("40-real-approval")
    card.get_by_role("button", name="Allow once").click()
    wait_for(lambda: (workspace / "made-by-toolgate.txt").exists(), 30, "the allowed command to run")
    expect(chat.locator("details.tool-done", has_text="touch made-by-toolgate.txt")).to_be_visible()

    # 2. The new file is a diff review against an empty original; the person edits the proposal, then accepts.
    review = chat.locator(".review-pending").last
    expect(review).to_contain_text("src/hello.py")
    tab = page.locator(".tabs-container .tab", has_text="hello.py (new file) ↔ toolgate proposal")
    expect(tab).to_be_visible()
    target = workspace / "src" / "hello.py"
    assert not target.exists()  # nothing is written before Accept
    page.locator(".monaco-diff-editor .editor.modified .view-line", has_text="print('hello')").click()
    page.keyboard.press("End")
    page.keyboard.type("  # reviewed")
    workbench.shot("41-real-diff-review")
    review.get_by_role("button", name="Accept").click()
    wait_for(lambda: target.exists(), 30, "the sidecar to write the accepted file")
    assert target.read_text() == "print('hello')  # reviewed\n"
    expect(tab).to_have_count(0)
    expect(chat.locator(".review-accepted").last).to_contain_text("Accepted with your edits to hello.py.")

    # 3. The model hears how the person changed its proposal, and finishes.
    expect(chat.locator(".msg-assistant").last).to_contain_text("Both are done.")
    expect(chat.locator("button.send")).to_be_visible()
    requests = mock_model.requests()
    assert len(requests) == 3
    told = json.dumps(requests[2]["body"]["messages"][-1])
    assert "reviewed" in told, told
    workbench.shot("42-real-done")
