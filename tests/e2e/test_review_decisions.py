"""Per-hunk Accept and a new file left out, in the diff review of a real VS Code (issue 30): the model's patch changes
greet.py and adds notes.txt; the person accepts greet.py's change with its lens, rejects the new file with its own,
and the lens that appears once every change of greet.py is decided answers the review. greet.py is patched,
notes.txt is not created, and the model's next request says so."""

from __future__ import annotations

import json

import pytest
import test_real_flows
from codeserver import REPO, CodeServer, wait_for
from playwright.sync_api import expect
from test_flows import wait_idle
from test_real_flows import MockFactory, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

mock_model = test_real_flows.mock_model


def test_an_accepted_hunk_and_a_new_file_left_out(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    notes = code_server.workspace / "notes.txt"
    before = greet.read_text()
    # The patch's context is the demo's own line; an earlier test in this editor may have changed it.
    pristine = (REPO / "examples" / "demo-workspace" / "src" / "greet.py").read_text()
    patch = (
        '*** Begin Patch\n*** Update File: src/greet.py\n@@\n-    return f"Hello, {name}!"\n'
        '+    return f"Goodbye, {name}!"\n*** Add File: notes.txt\n+a note\n*** End Patch\n'
    )
    try:
        greet.write_text(pristine)
        model = mock_model(
            [
                {"text": "Reading it.", "tool_uses": [{"name": "Read", "input": {"file_path": str(greet)}}]},
                {"text": "One patch.", "tool_uses": [{"name": "ApplyPatch", "input": {"patch": patch}}]},
                {"text": "Patched."},
            ]
        )
        chat = workbench.open_chat()
        send(workbench, "Say goodbye and leave a note.")
        expect(chat.locator(".review-pending").last).to_contain_text("notes.txt")
        lens = page.locator(".monaco-diff-editor .editor.modified .codelens-decoration a")

        page.locator(".tabs-container .tab", has_text="notes.txt (new file) ↔ toolgate proposal").click()
        lens.filter(has_text="Reject this file (do not create it)").click()
        expect(lens.filter(has_text="This new file will not be created")).to_be_visible()

        page.locator(".tabs-container .tab", has_text="greet.py ↔ toolgate proposal").click()
        lens.filter(has_text="Accept this change").click()
        expect(lens.filter(has_text="Reject this change")).to_have_count(0)
        accept_review = lens.filter(has_text="Every change here is decided: Accept the review")
        expect(accept_review).to_be_visible()
        workbench.shot("330-review-decided")
        accept_review.click()

        wait_for(lambda: greet.read_text() != pristine, 30, "greet.py to be patched")
        assert "Goodbye" in greet.read_text() and not notes.exists()
        expect(chat.locator(".msg-assistant").last).to_contain_text("Patched.")
        wait_idle(chat)
        told = json.dumps(model.requests()[2]["body"]["messages"][-1])
        assert "The user chose not to create notes.txt" in told, told
    finally:
        greet.write_text(before)
        notes.unlink(missing_ok=True)
