"""Subagents in a real VS Code: the real sidecar runs the agent loop against the mock model, which plays the parent
and, in its lane (told apart by the marker in the child's system prompt), the child. The Agent call is a card of its
own with the child's calls inside, live; the approval the child asks for names it, sits right under the card (its
waiting call links to it), and answering it lets it go on. A reopened session draws the card again from the record.
"""

from __future__ import annotations

import pytest
from codeserver import CodeServer, wait_for
from playwright.sync_api import expect
from test_real_flows import MockFactory, mock_model, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

__all__ = ["mock_model"]  # the fixture, used by name below

GENERAL = "subagent of type `general`"
TITLE = "Allow Bash? — asked by the subagent general: prepare the build"


def test_an_agent_card_shows_the_childs_calls_and_its_approval_names_it(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    made = code_server.workspace / "made-by-a-subagent"
    agent = {"description": "prepare the build", "prompt": "Make the directory.", "subagent_type": "general"}
    model = mock_model(
        [
            {"text": "I'll hand this to a subagent.", "tool_uses": [{"name": "Agent", "input": agent}]},
            {"text": "The subagent made the directory."},
        ],
        script={
            "lanes": {
                GENERAL: [
                    {"tool_uses": [{"name": "Glob", "input": {"pattern": "*.md"}}]},
                    {"tool_uses": [{"name": "Bash", "input": {"command": "mkdir made-by-a-subagent"}}]},
                    {"text": "Made the directory made-by-a-subagent."},
                ]
            },
        },
    )
    chat = workbench.open_chat()
    send(workbench, "Prepare the build with a subagent.")

    # The Agent call is one card, open while its child works, with the child's calls inside it.
    card = chat.locator("details.agent-card")
    expect(card).to_have_count(1)
    expect(card.locator(".tool-summary").first).to_have_text("general: prepare the build")
    expect(card.locator(".agent-status")).to_have_text("running")
    expect(card.locator(".agent-call-done", has_text="*.md")).to_be_visible()
    waiting = card.locator(".agent-call-waiting", has_text="mkdir made-by-a-subagent")
    expect(waiting).to_contain_text("waits for your approval")
    # The child's calls are not cards of the transcript's own.
    expect(chat.locator("details.tool:not(.agent-card)")).to_have_count(0)

    # The child's approval names the child in its title, and is drawn right under its Agent card, joined to it.
    approval = chat.locator(".approval-pending")
    expect(approval).to_have_count(1)
    expect(approval.locator(".card-title")).to_have_text(TITLE)
    expect(approval.locator(".card-summary")).to_have_text("mkdir made-by-a-subagent")
    expect(chat.locator("details.agent-card + .approval-pending.approval-subagent")).to_have_count(1)
    # The waiting call's line takes the keyboard to the approval card it waits on.
    chat.locator(".composer-input").focus()
    expect(approval).not_to_be_focused()
    waiting.get_by_role("button", name="waits for your approval below").press("Enter")
    expect(approval).to_be_focused()
    assert not made.exists()
    workbench.shot("60-agent-card-approval")
    approval.get_by_role("button", name="Allow once").click()
    wait_for(lambda: made.is_dir(), 30, "the subagent's allowed command to run")

    expect(card.locator(".agent-status")).to_have_text("done")
    expect(chat.locator(".msg-assistant").last).to_contain_text("The subagent made the directory.")
    expect(card).not_to_have_attribute("open", "")  # folded once done: the person opens it to read the answer
    card.locator("summary").click()
    expect(card.locator(".agent-answer")).to_be_visible()
    expect(card.locator(".agent-call-done", has_text="mkdir made-by-a-subagent")).to_be_visible()
    expect(card.locator(".agent-answer")).to_have_text("Made the directory made-by-a-subagent.")
    workbench.shot("61-agent-card-done")
    lanes = [request.get("lane") for request in model.requests()]
    assert lanes == [None, GENERAL, GENERAL, GENERAL, None], lanes

    # Left for a new session and opened again, the Agent card is drawn from the child's record: its calls, its answer,
    # and the approval it asked for under it, naming it.
    sessions = chat.locator("select.session-select")
    session_id = sessions.input_value()
    chat.get_by_role("button", name="New").click()
    expect(card).to_have_count(0)
    wait_for(lambda: sessions.locator(f"option[value='{session_id}']").count() == 1, 30, "the session to be listed")
    sessions.select_option(session_id)
    expect(card.locator(".agent-status")).to_have_text("done")
    # (Folded or open as the person left it: the lines are there either way.)
    expect(card.locator(".agent-call-done", has_text="*.md")).to_have_count(1)
    expect(card.locator(".agent-call-done", has_text="mkdir made-by-a-subagent")).to_have_count(1)
    expect(card.locator(".agent-answer")).to_have_text("Made the directory made-by-a-subagent.")
    answered = chat.locator("details.agent-card + .approval-allowed.approval-subagent")
    expect(answered.locator(".card-title")).to_have_text(TITLE)
    workbench.shot("62-agent-card-reopened")
