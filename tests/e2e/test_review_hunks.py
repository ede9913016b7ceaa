"""Per-hunk and per-file decisions in the diff review, in a real VS Code (issue 30): the model's Write changes two
places of a file; the person rejects one of them and leaves a note on its line, and accepts; the other one is
written, and the model's next request says which hunk was applied, which rejected, and the note. One file of a
two-file patch is rejected with its lens; the other is applied."""

from __future__ import annotations

import json

import pytest
import test_real_flows
from codeserver import CodeServer, wait_for
from playwright.sync_api import expect
from test_flows import wait_idle
from test_real_flows import MockFactory, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

mock_model = test_real_flows.mock_model


def test_a_rejected_hunk_is_left_out_and_the_model_is_told_which(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    before = greet.read_text()
    proposed = before.replace("A small module", "A tiny module").replace('greet("world")', 'greet("toolgate")')
    try:
        model = mock_model(
            [
                {"text": "Reading it.", "tool_uses": [{"name": "Read", "input": {"file_path": str(greet)}}]},
                {
                    "text": "Two changes.",
                    "tool_uses": [{"name": "Write", "input": {"file_path": str(greet), "content": proposed}}],
                },
                {"text": "Done with both."},
            ]
        )
        chat = workbench.open_chat()
        send(workbench, "Make it tiny and greet toolgate.")
        review = chat.locator(".review-pending").last
        expect(review).to_contain_text("greet.py")
        lenses = page.locator(
            ".monaco-diff-editor .editor.modified .codelens-decoration a", has_text="Reject this change"
        )
        expect(lenses).to_have_count(2)
        workbench.shot("310-review-hunk-lenses")
        # The second hunk, by keyboard: the cursor on its line, then the command's keybinding.
        workbench.type_at_end_of(
            page.locator(".monaco-diff-editor .editor.modified .view-line", has_text="toolgate"), ""
        )
        page.keyboard.press("Control+Alt+Backspace")
        expect(lenses).to_have_count(1)
        expect(page.locator(".monaco-diff-editor .editor.modified")).not_to_contain_text('greet("toolgate")')
        # A note for the agent on that line, shown there as a comment, sent with the decision.
        page.keyboard.press("Control+Alt+M")
        box = page.locator(".quick-input-widget input.input")
        expect(box).to_be_visible()
        box.fill("keep greeting the world")
        box.press("Enter")
        expect(page.locator(".monaco-diff-editor .editor.modified")).to_contain_text("keep greeting the world")
        workbench.shot("312-review-note")
        review.get_by_role("button", name="Accept", exact=True).click()
        wait_for(lambda: greet.read_text() != before, 30, "the accepted hunk to be written")
        assert greet.read_text() == before.replace("A small module", "A tiny module")
        expect(chat.locator(".msg-assistant").last).to_contain_text("Done with both.")
        wait_idle(chat)
        told = json.dumps(model.requests()[2]["body"]["messages"][-1])
        assert "applied 1 of 2 hunks: #1" in told and "rejected 1 of 2 hunks: #2" in told, told
        assert "with these notes:\\n- src/greet.py, line 9: keep greeting the world" in told, told
    finally:
        greet.write_text(before)


def test_one_file_of_a_two_file_patch_is_rejected_and_the_other_applied(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    readme = code_server.workspace / "README.md"
    greet_before, readme_before = greet.read_text(), readme.read_text()
    # The patch needs its context lines as written here: an earlier test in this editor may have changed the demo's.
    greet_start = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
    readme_start = "# Demo workspace\n\nA small project.\n"
    patch = (
        '*** Begin Patch\n*** Update File: src/greet.py\n@@\n-    return f"Hello, {name}!"\n'
        '+    return f"Goodbye, {name}!"\n*** Update File: README.md\n@@\n-# Demo workspace\n+# DEMO workspace\n'
        "*** End Patch\n"
    )
    try:
        greet.write_text(greet_start)
        readme.write_text(readme_start)
        model = mock_model(
            [
                {
                    "text": "Reading both.",
                    "tool_uses": [
                        {"name": "Read", "input": {"file_path": str(greet)}},
                        {"name": "Read", "input": {"file_path": str(readme)}},
                    ],
                },
                {"text": "One patch.", "tool_uses": [{"name": "ApplyPatch", "input": {"patch": patch}}]},
                {"text": "Patched."},
            ]
        )
        chat = workbench.open_chat()
        send(workbench, "Say goodbye and shout the title.")
        review = chat.locator(".review-pending").last
        expect(review).to_contain_text("README.md")
        page.locator(".tabs-container .tab", has_text="README.md ↔ toolgate proposal").click()
        reject_file = page.locator(
            ".monaco-diff-editor .editor.modified .codelens-decoration a", has_text="Reject this file"
        )
        expect(reject_file).to_be_visible()
        reject_file.click()
        restore = page.locator(".monaco-diff-editor .editor.modified .codelens-decoration a", has_text="Restore")
        expect(restore).to_be_visible()
        workbench.shot("311-review-file-rejected")
        review.get_by_role("button", name="Accept", exact=True).click()
        wait_for(lambda: greet.read_text() != greet_start, 30, "greet.py to be patched")
        assert greet.read_text() == greet_start.replace("Hello", "Goodbye") and readme.read_text() == readme_start
        expect(chat.locator(".msg-assistant").last).to_contain_text("Patched.")
        wait_idle(chat)
        told = json.dumps(model.requests()[2]["body"]["messages"][-1])
        assert "rejected your whole change to README.md" in told, told
    finally:
        greet.write_text(greet_before)
        readme.write_text(readme_before)
