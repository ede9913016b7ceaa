"""A reopened session looks as it did live (issue 20, must-fix 7), in a real VS Code with the real sidecar and the
mock model: one turn updates the todo list, has a command denied with feedback and a new file accepted with the
person's edits; then the session is left and opened again. The transcript's DOM, normalised (no ids, no clocks), is
the same, and so is the todo list.
"""

from __future__ import annotations

from typing import Any

import pytest
import test_real_flows
from codeserver import CodeServer, wait_for
from playwright.sync_api import FrameLocator, expect
from test_real_flows import MockFactory, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

mock_model = test_real_flows.mock_model

# What a person sees of each transcript item: its classes and its text, minus what only a clock decides (a tool's
# duration) and the live output, which a stored conversation does not keep.
SNAPSHOT = """
(root) => Array.from(root.children).map((item) => {
  const copy = item.cloneNode(true);
  copy.querySelectorAll('.tool-duration, .tool-output').forEach((node) => node.remove());
  const parts = Array.from(copy.querySelectorAll('*')).map((node) => node.className).filter(Boolean);
  return { cls: item.className, parts: parts.join(' '), text: copy.textContent.replace(/\\s+/g, ' ').trim() };
})
"""


def snapshot(chat: FrameLocator) -> tuple[list[dict[str, Any]], str]:
    items: list[dict[str, Any]] = chat.locator("main.transcript").evaluate(SNAPSHOT)
    todos = chat.locator("details.todos")
    return items, (todos.text_content() or "") if todos.is_visible() else ""


def test_a_reopened_session_draws_its_cards_outcomes_and_todos_as_live(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    notes = code_server.workspace / "notes.md"
    todos = [
        {"id": "1", "content": "Leave a marker", "status": "completed"},
        {"id": "2", "content": "Write the notes", "status": "in_progress"},
    ]
    mock_model(
        [
            {
                "text": "First the plan and a marker.",
                "tool_uses": [
                    {"name": "TodoWrite", "input": {"todos": todos}},
                    {"name": "Bash", "input": {"command": "touch marker-from-history-test.txt"}},
                ],
            },
            {
                "text": "Then the notes.",
                "tool_uses": [{"name": "Write", "input": {"file_path": str(notes), "content": "one\n"}}],
            },
            {"text": "All done."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Plan, mark and write notes.")

    card = chat.locator(".approval-pending").last
    expect(card).to_contain_text("touch marker-from-history-test.txt")
    card.get_by_role("button", name="Deny…").click()
    feedback = card.get_by_label("Feedback for the agent")
    feedback.fill("no markers today")
    feedback.press("Enter")
    expect(chat.locator(".approval-denied").last).to_contain_text("Denied, with feedback: no markers today")

    review = chat.locator(".review-pending").last
    expect(review).to_contain_text("notes.md")
    workbench.type_at_end_of(page.locator(".monaco-diff-editor .editor.modified .view-line", has_text="one"), " (mine)")
    review.get_by_role("button", name="Accept", exact=True).click()
    wait_for(lambda: notes.exists(), 30, "the sidecar to write the accepted file")
    expect(chat.locator(".review-accepted").last).to_contain_text("Accepted with your edits to notes.md.")
    expect(chat.locator(".msg-assistant").last).to_contain_text("All done.")
    expect(chat.locator("button.send")).to_be_visible()
    # The turn's checkpoints arrive after it ended (checkpoints/list): wait for them, live and reopened alike.
    expect(chat.locator(".msg-user .checkpoint-changes")).to_have_text("1 file changed")
    live_items, live_todos = snapshot(chat)
    assert "Write the notes" in live_todos
    workbench.shot("80-history-live")

    # Leave the session for a new one, then open it again from the session list.
    sessions = chat.locator("select.session-select")
    session_id = sessions.input_value()
    chat.get_by_role("button", name="New").click()
    expect(chat.locator(".approval-denied")).to_have_count(0)
    wait_for(lambda: sessions.locator(f"option[value='{session_id}']").count() == 1, 30, "the session to be listed")
    sessions.select_option(session_id)
    expect(chat.locator(".review-accepted")).to_contain_text("Accepted with your edits to notes.md.")
    expect(chat.locator(".msg-user .checkpoint-changes")).to_have_text("1 file changed")
    reopened_items, reopened_todos = snapshot(chat)
    workbench.shot("81-history-reopened")

    assert reopened_items == live_items
    assert reopened_todos == live_todos
    # The denied approval is drawn as a line of its tool's card (the call and its answer are one thing to read).
    denied = "tool-answer approval-denied"
    assert any("tool-error" in item["cls"] and denied in item["parts"] for item in reopened_items)
    assert not any('"todos"' in item["text"] for item in reopened_items)  # no raw JSON on the TodoWrite card
