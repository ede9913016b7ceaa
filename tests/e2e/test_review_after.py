"""Review mode "after" in a real VS Code (issue 30), with the real sidecar and the mock model: with
`toolgate.diffReview: after`, the model's Edit applies at once and the turn goes on without a click (no review, no
approval); the file shows in the changes bar, Undo from the bar by keyboard puts it back, and the model's next
request says the person undid it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import test_real_flows
from codeserver import CodeServer, wait_for
from playwright.sync_api import expect
from test_changes_bar import _tab_to
from test_flows import wait_idle
from test_real_flows import MockFactory, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

mock_model = test_real_flows.mock_model


def _sessions_reviewing_after(root: Path) -> list[Path]:
    """The stored sessions whose edits are reviewed after they apply (the sidecar writes the mode to meta.json)."""
    return [
        meta
        for meta in root.rglob("sessions/*/meta.json")
        if re.search(r'"review_edits":\s*"after"', meta.read_text(errors="replace"))
    ]


def test_an_edit_applies_at_once_and_is_undone_from_the_changes_bar(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    before = greet.read_bytes()
    edit = {"file_path": str(greet), "old_string": "Hello", "new_string": "Goodbye"}
    try:
        model = mock_model(
            [
                {"text": "Reading it.", "tool_uses": [{"name": "Read", "input": {"file_path": str(greet)}}]},
                {"text": "Ready."},
                {"text": "Editing.", "tool_uses": [{"name": "Edit", "input": edit}]},
                {"text": "Edited."},
                {"text": "Understood."},
            ],
            settings={"toolgate.diffReview": "after"},
        )
        chat = workbench.open_chat()
        send(workbench, "Read greet.py.")
        expect(chat.locator(".msg-assistant").last).to_contain_text("Ready.")
        wait_idle(chat)
        # The session was made with the setting in force: the sidecar stores the session's mode.
        wait_for(lambda: bool(_sessions_reviewing_after(code_server.root)), 30, "the session to review after", 0.5)

        send(workbench, "Say goodbye.")
        # Nobody clicks: the edit applies and the model's next request comes on its own.
        expect(chat.locator(".msg-assistant").last).to_contain_text("Edited.")
        wait_idle(chat)
        assert len(model.requests()) == 4
        assert b"Goodbye" in greet.read_bytes()
        expect(chat.locator(".review-pending")).to_have_count(0)
        expect(chat.locator(".approval-pending")).to_have_count(0)
        bar = chat.locator(".changes-bar")
        expect(bar.locator(".changes-summary")).to_have_text(re.compile(r"^1 file changed \+1 −1$"))
        workbench.shot("320-review-after-applied")

        page.keyboard.press("Control+Alt+C")  # the keyboard goes to the bar
        _tab_to(page, bar.locator(".changes-file[data-path='src/greet.py'] .changes-undo"))
        page.keyboard.press("Enter")
        wait_for(lambda: greet.read_bytes() == before, 30, "greet.py to be undone")
        expect(bar.locator(".changes-notice")).to_contain_text("Undid the agent’s changes in src/greet.py.")
        expect(bar.locator(".changes-file")).to_have_count(0)

        send(workbench, "What now?")
        expect(chat.locator(".msg-assistant").last).to_contain_text("Understood.")
        wait_idle(chat)
        told = json.dumps(model.requests()[4]["body"]["messages"])
        assert "The user undid some of your changes to 1 file(s): src/greet.py." in told, told
    finally:
        greet.write_bytes(before)
