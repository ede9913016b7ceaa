"""Checkpoints in a real VS Code (issue 15), with the real sidecar and the mock model: a turn edits one file and
changes another with Bash; the prompt then says "2 files changed" and opens the turn's diff in the changes editor;
Restore… puts both files back (after a preview and a confirmation), Redo brings the changes back, and a
conversation restore cuts the transcript back to before a message.
"""

from __future__ import annotations

import pytest
import test_real_flows
from codeserver import CodeServer, wait_for
from playwright.sync_api import Page, expect
from test_flows import wait_idle
from test_real_flows import MockFactory, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

mock_model = test_real_flows.mock_model


def choose(page: Page, label: str) -> None:
    """Pick the quick pick's row that starts with `label` (the list is in the order Restore… offers)."""
    rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row")
    expect(rows.first).to_be_visible()
    rows.filter(has_text=label).first.click()


def confirm(page: Page, question: str) -> None:
    dialog = page.locator(".monaco-dialog-box")
    expect(dialog).to_contain_text(question)
    dialog.get_by_role("button", name="Restore").click()
    expect(dialog).to_have_count(0)


def test_a_turns_files_changed_restore_code_and_redo(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    readme = code_server.workspace / "README.md"
    greet_before, readme_before = greet.read_bytes(), readme.read_bytes()
    mock_model(
        [
            {"text": "Reading it first.", "tool_uses": [{"name": "Read", "input": {"file_path": str(greet)}}]},
            {
                "text": "Changing the greeting.",
                "tool_uses": [
                    {"name": "Edit", "input": {"file_path": str(greet), "old_string": "Hello", "new_string": "Goodbye"}}
                ],
            },
            {
                "text": "And the README.",
                "tool_uses": [{"name": "Bash", "input": {"command": "sed -i 's/demo/DEMO/' README.md"}}],
            },
            {"text": "Both are changed."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Make it a farewell and shout demo.")
    chat.locator(".review-pending").last.get_by_role("button", name="Accept", exact=True).click()
    chat.locator(".approval-pending").last.get_by_role("button", name="Allow once").click()
    expect(chat.locator(".msg-assistant").last).to_contain_text("Both are changed.")
    wait_idle(chat)
    greet_after, readme_after = greet.read_bytes(), readme.read_bytes()
    assert greet_after != greet_before and b"Goodbye" in greet_after
    assert readme_after != readme_before and b"DEMO" in readme_after

    # The prompt says what its turn changed, Bash's change included, and opens the turn's diff.
    prompt = chat.locator(".msg-user").last
    changed = prompt.get_by_role("button", name="2 files changed")
    expect(changed).to_be_visible()
    workbench.shot("150-checkpoints-files-changed")
    changed.click()
    changes_tab = page.locator(".tabs-container .tab", has_text="Changes of")
    expect(changes_tab).to_be_visible()
    editor = page.locator(".multiDiffEditor, .multi-diff-editor").first
    expect(editor).to_contain_text("greet.py")
    expect(editor).to_contain_text("README.md")
    workbench.shot("151-checkpoints-turn-diff")

    # Restore… code: a preview of what it would do, a confirmation naming the files, then both files are back.
    workbench.open_chat()
    prompt.get_by_role("button", name="Restore…").click()
    choose(page, "Restore code")
    expect(page.locator(".tabs-container .tab", has_text="Restore: now")).to_be_visible()
    dialog = page.locator(".monaco-dialog-box")
    expect(dialog).to_contain_text("Restore 2 files to before this message?")
    workbench.shot("152-checkpoints-restore-preview")
    confirm(page, "Restore 2 files")
    wait_for(lambda: greet.read_bytes() == greet_before, 30, "greet.py to be restored")
    wait_for(lambda: readme.read_bytes() == readme_before, 30, "README.md to be restored")
    notice = chat.locator(".notice", has_text="Restored 2 files to before that message.")
    expect(notice).to_be_visible()
    # The preview compared now with the checkpoint; after the restore it would show nothing true, so it closes.
    expect(page.locator(".tabs-container .tab", has_text="Restore: now")).to_have_count(0)
    workbench.shot("153-checkpoints-restored")

    # Redo: the turn's changes are back.
    notice.get_by_role("button", name="Redo").click()
    wait_for(lambda: greet.read_bytes() == greet_after, 30, "greet.py to be changed again")
    wait_for(lambda: readme.read_bytes() == readme_after, 30, "README.md to be changed again")
    expect(chat.locator(".notice").last).to_contain_text("Redone: 2 files")
    workbench.shot("154-checkpoints-redone")
    # Leave the workspace as the other tests expect it.
    greet.write_bytes(greet_before)
    readme.write_bytes(readme_before)


def test_a_conversation_restore_cuts_the_transcript(mock_model: MockFactory, workbench: Workbench) -> None:
    page = workbench.page
    mock_model([{"text": "First answer."}, {"text": "Second answer."}])
    chat = workbench.open_chat()
    send(workbench, "The first question.")
    expect(chat.locator(".msg-assistant").last).to_contain_text("First answer.")
    wait_idle(chat)
    send(workbench, "The second question.")
    expect(chat.locator(".msg-assistant").last).to_contain_text("Second answer.")
    wait_idle(chat)
    second = chat.locator(".msg-user", has_text="The second question.")
    restore = second.get_by_role("button", name="Restore…")
    expect(restore).to_be_visible()
    expect(second.get_by_role("button", name="files changed")).to_have_count(0)  # that turn changed nothing

    restore.focus()  # keyboard reachable: Enter on the focused button asks the same
    restore.press("Enter")
    choose(page, "Restore conversation")
    confirm(page, "Restore the conversation to before this message?")
    transcript = chat.locator("main.transcript")
    expect(chat.locator(".notice").last).to_contain_text("Restored: the conversation cut back")
    expect(transcript).not_to_contain_text("The second question.")
    expect(transcript).not_to_contain_text("Second answer.")
    expect(transcript).to_contain_text("The first question.")
    expect(transcript).to_contain_text("First answer.")
    workbench.shot("155-checkpoints-conversation-restored")


def test_a_restore_refuses_files_with_unsaved_changes_and_says_which(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    before = greet.read_bytes()
    model = mock_model(
        [
            {
                "text": "Shorter.",
                "tool_uses": [{"name": "Bash", "input": {"command": "sed -i 's/Hello/Hi/' src/greet.py"}}],
            },
            {"text": "Done."},
        ]
    )
    # The web editor saves after a delay by default: off, so a typed change stays unsaved.
    settings = {"toolgate.provider": "openai", "toolgate.baseUrl": f"{model.url}/v1", "files.autoSave": "off"}
    code_server.write_workspace_settings(settings)
    chat = workbench.open_chat()
    send(workbench, "Say hi instead.")
    chat.locator(".approval-pending").last.get_by_role("button", name="Allow once").click()
    expect(chat.locator(".msg-assistant").last).to_contain_text("Done.")
    wait_idle(chat)
    changed = greet.read_bytes()
    assert b"Hi," in changed

    # The person has typed into the file and not saved: the restore would overwrite that, so it refuses, by name,
    # before any preview or question.
    page.keyboard.press("Escape")
    page.keyboard.press("Control+P")
    box = page.locator(".quick-input-widget input.input")
    box.fill("src/greet.py")
    page.locator(".quick-input-widget .monaco-list-row", has_text="greet.py").first.click()
    workbench.type_at_end_of(page.locator(".monaco-editor .view-line", has_text="def greet"), "  # my draft")
    expect(page.locator(".tabs-container .tab.dirty", has_text="greet.py")).to_be_visible()
    workbench.open_chat()
    chat.locator(".msg-user").last.get_by_role("button", name="Restore…").click()
    choose(page, "Restore code")
    refusal = chat.locator(".notice-warning").last
    expect(refusal).to_contain_text("Nothing was restored")
    expect(refusal).to_contain_text("unsaved changes in the editor")
    expect(refusal).to_contain_text("src/greet.py")
    expect(page.locator(".monaco-dialog-box")).to_have_count(0)
    workbench.shot("156-checkpoints-unsaved-refused")
    assert greet.read_bytes() == changed

    # Reverted, the same restore goes through.
    workbench.run_command("File: Revert File")
    expect(page.locator(".tabs-container .tab.dirty", has_text="greet.py")).to_have_count(0)
    workbench.open_chat()
    chat.locator(".msg-user").last.get_by_role("button", name="Restore…").click()
    choose(page, "Restore code")
    confirm(page, "Restore 1 file to before this message?")
    wait_for(lambda: greet.read_bytes() == before, 30, "greet.py to be restored")
