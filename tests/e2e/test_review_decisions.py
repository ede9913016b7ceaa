"""Per-hunk Accept and files left out, in the diff review of a real VS Code (issues 30 and the review round after):
the model's patch changes greet.py, adds notes.txt and deletes obsolete.txt. The person accepts greet.py's change with
its lens; the lens that then appears opens the next undecided file instead of accepting files nobody looked at; the
new file is left out and the deletion rejected with their own lenses, and only then does a lens (with the review's
counts) answer it. greet.py is patched, notes.txt is not created, obsolete.txt is kept, and the model's next request
says so."""

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


def test_an_accepted_hunk_and_a_new_file_and_a_deletion_left_out(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    notes = code_server.workspace / "notes.txt"
    obsolete = code_server.workspace / "obsolete.txt"
    before = greet.read_text()
    # The patch's context is the demo's own line; an earlier test in this editor may have changed it.
    pristine = (REPO / "examples" / "demo-workspace" / "src" / "greet.py").read_text()
    patch = (
        '*** Begin Patch\n*** Update File: src/greet.py\n@@\n-    return f"Hello, {name}!"\n'
        '+    return f"Goodbye, {name}!"\n*** Add File: notes.txt\n+a note\n*** Delete File: obsolete.txt\n'
        "*** End Patch\n"
    )
    try:
        greet.write_text(pristine)
        obsolete.write_text("still needed\n")
        model = mock_model(
            [
                {
                    "text": "Reading them.",
                    "tool_uses": [
                        {"name": "Read", "input": {"file_path": str(greet)}},
                        {"name": "Read", "input": {"file_path": str(obsolete)}},
                    ],
                },
                {"text": "One patch.", "tool_uses": [{"name": "ApplyPatch", "input": {"patch": patch}}]},
                {"text": "Patched."},
            ]
        )
        chat = workbench.open_chat()
        send(workbench, "Say goodbye, leave a note and remove the obsolete file.")
        card = chat.locator(".review-pending").last
        expect(card).to_contain_text("obsolete.txt")
        lens = page.locator(".monaco-diff-editor .editor.modified .codelens-decoration a")
        tab = page.locator(".tabs-container .tab.active")

        # The card's file link brings its diff forward (three tabs and the title's buttons may not all fit).
        card.get_by_role("button", name="src/greet.py").click()
        expect(tab).to_contain_text("greet.py ↔ toolgate proposal")
        lens.filter(has_text="Accept this change").click()
        expect(lens.filter(has_text="Reject this change")).to_have_count(0)
        expect(lens.filter(has_text="Accept the review")).to_have_count(0)  # the other files are undecided
        lens.filter(has_text="Decided here; still undecided: notes.txt, obsolete.txt. Open notes.txt").click()

        expect(tab).to_contain_text("notes.txt (new file)")
        lens.filter(has_text="Reject this file (do not create it)").click()
        expect(lens.filter(has_text="This new file will not be created")).to_be_visible()
        lens.filter(has_text="Decided here; still undecided: obsolete.txt. Open obsolete.txt").click()

        expect(tab).to_contain_text("obsolete.txt ↔ deleted by toolgate proposal")
        lens.filter(has_text="Reject this file (keep it, do not delete it)").click()
        expect(lens.filter(has_text="This file will not be deleted")).to_be_visible()
        accept_review = lens.filter(
            has_text="Every file is decided: Accept the review (1 file changes +1 −1, 2 stay as they are)"
        )
        expect(accept_review).to_be_visible()
        workbench.shot("330-review-decided")
        accept_review.click()

        wait_for(lambda: greet.read_text() != pristine, 30, "greet.py to be patched")
        assert "Goodbye" in greet.read_text() and not notes.exists()
        assert obsolete.read_text() == "still needed\n"
        expect(chat.locator(".msg-assistant").last).to_contain_text("Patched.")
        wait_idle(chat)
        expect(chat.locator(".review").last).to_contain_text(
            "Accepted, without notes.txt (not created), obsolete.txt (kept, not deleted)."
        )
        told = json.dumps(model.requests()[2]["body"]["messages"][-1])
        assert "The user chose not to create notes.txt" in told, told
        assert "The user rejected the deletion of obsolete.txt: it was kept, unchanged." in told, told
    finally:
        greet.write_text(before)
        notes.unlink(missing_ok=True)
        obsolete.unlink(missing_ok=True)
