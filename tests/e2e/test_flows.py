"""The chat's interactive parts in a real VS Code, driven by a scripted fake sidecar (fake_sidecar.py) that speaks
the protocol of issues 7 and 8: streaming text, tool cards with live output, the approval card (allow with a
remembered rule, deny with feedback, the notification when the chat is hidden), the diff review (edit the proposal,
accept from the editor title; reject with feedback from the card), todos and interrupt.

These check the extension's side of the contract. The same flows against the real sidecar and the mock model are
phase 2's end-to-end tests.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codeserver import VENV_PYTHON, CodeServer, wait_for
from playwright.sync_api import FrameLocator, expect
from workbench import Workbench

pytestmark = pytest.mark.e2e

FAKE = Path(__file__).resolve().parent / "fake_sidecar.py"


class FakeSidecar:
    def __init__(self, root: Path) -> None:
        self.log = root / "fake-sidecar.jsonl"
        self.python = root / "fake-python"
        # The extension probes the interpreter with `-c` (answered by the real one), then runs
        # `-P -m toolgate serve` (answered by the fake).
        self.python.write_text(
            "#!/bin/sh\n"
            f'if [ "$1" = "-c" ]; then exec "{VENV_PYTHON}" "$@"; fi\n'
            f'TOOLGATE_FAKE_LOG="{self.log}" exec "{VENV_PYTHON}" "{FAKE}"\n'
        )
        self.python.chmod(self.python.stat().st_mode | stat.S_IXUSR)

    def answers(self, kind: str) -> list[Any]:
        if not self.log.exists():
            return []
        entries = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [entry["payload"] for entry in entries if entry["kind"] == kind]

    def counts(self) -> dict[str, int]:
        """How many answers of each kind the fake has received so far."""
        return {kind: len(self.answers(kind)) for kind in ("approval", "review", "interrupt")}

    def next_answer(self, kind: str, seen: int) -> Any:
        """The first answer of `kind` after the `seen` ones already there when the test acted."""
        wait_for(lambda: len(self.answers(kind)) > seen, 30, f"an answer of kind {kind} from the editor")
        return self.answers(kind)[seen]


@pytest.fixture(scope="module")
def fake(code_server: CodeServer, workbench: Workbench) -> Iterator[FakeSidecar]:
    sidecar = FakeSidecar(code_server.root)
    code_server.write_workspace_settings({"toolgate.python.path": str(sidecar.python)})
    chat = workbench.open_chat()
    # Ready, and ready on the fake: right after the settings change the sidecar that was running still says ready
    # until the editor notices the change and restarts it.
    expect(chat.locator(".sidecar-status .status-text")).to_contain_text("toolgate-fake")
    expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready")
    yield sidecar
    code_server.write_workspace_settings(None)


def send(chat: FrameLocator, text: str) -> None:
    composer = chat.locator(".composer-input")
    composer.fill(text)
    composer.press("Enter")


def wait_idle(chat: FrameLocator) -> None:
    expect(chat.locator("button.send")).to_be_visible()


def test_the_fake_sidecar_is_ready(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    expect(chat.locator(".sidecar-status")).to_contain_text("toolgate-fake 0.0.0-fake · Python 3.")
    workbench.shot("20-fake-sidecar-ready")


def test_streaming_reply_tool_card_and_always_allow(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    seen = fake.counts()
    send(chat, "run the tests")
    expect(chat.locator(".msg-user").last).to_have_text("run the tests")
    expect(chat.locator(".msg-assistant").last).to_contain_text("Working on it.")
    expect(chat.locator(".msg-assistant strong").last).to_have_text("it")  # markdown, rendered as elements
    card = chat.locator(".approval-pending").last
    expect(card).to_contain_text("Allow Bash?")
    expect(card).to_contain_text("pytest -q")
    expect(card).to_contain_text("Why you are asked: No rule allows Bash(pytest -q) yet")
    expect(chat.locator(".tool-running .tool-name").last).to_have_text("Bash")
    workbench.shot("21-approval-card")

    card.get_by_role("button", name="Always allow…").click()
    rule = card.get_by_label("Rule to add")
    expect(rule).to_have_value("Bash(pytest -q)")  # the first suggestion, ready to edit
    card.get_by_role("button", name="Bash(pytest:*)").click()
    expect(rule).to_have_value("Bash(pytest:*)")
    expect(card.locator("select.scope")).to_have_value("project")  # the suggestion's own scope is preselected
    card.locator("select.scope").select_option("user")
    workbench.shot("22-always-allow")
    card.get_by_role("button", name="Add rule and allow").click()

    # The rule is saved through the sidecar first (which validates it); the answer is then a plain allow.
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    added = fake.answers("addRule")[-1]
    assert (added["rule"], added["behavior"], added["scope"]) == ("Bash(pytest:*)", "allow", "user")
    assert added["call"]["tool"] == "Bash"  # the waiting call, so the one answer says whether the rule covers it
    # Before saving, one check of the unsaved rule against the waiting call (does it cover it?); nothing else.
    assert fake.answers("permissionsCheck") == [
        {
            "sessionId": added["sessionId"],
            "tool": "Bash",
            "input": {"command": "pytest -q"},
            "withAllow": "Bash(pytest:*)",
        }
    ]
    resolved = chat.locator(".approval-allowed").last
    expect(resolved).to_contain_text("From now on Bash(pytest:*) is allowed (all my projects)")
    tool = chat.locator("details.tool-done").last
    expect(tool.locator(".tool-result-summary")).to_have_text("exit status 1")
    expect(tool.locator("pre.tool-result")).to_have_text("2 passed, 1 failed")  # shown once: the result…
    expect(tool.locator("pre.live")).to_have_count(0)  # …not the live output again
    wait_idle(chat)
    workbench.shot("23-tool-card-done")


def test_deny_with_feedback(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    seen = fake.counts()
    send(chat, "run the tests again")
    card = chat.locator(".approval-pending").last
    card.get_by_role("button", name="Deny…").click()
    feedback = card.get_by_label("Feedback for the agent")
    expect(feedback).to_be_focused()
    feedback.fill("use make test instead")
    feedback.press("Enter")
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "deny", "feedback": "use make test instead"}
    expect(chat.locator(".approval-denied").last).to_contain_text("Denied, with feedback: use make test instead")
    expect(chat.locator("details.tool-error").last).to_contain_text("Denied by the user: use make test instead")
    wait_idle(chat)
    workbench.shot("24-denied")


def test_diff_review_accept_with_the_persons_edit(
    fake: FakeSidecar, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    target = code_server.workspace / "src" / "greet.py"
    before = target.read_text()
    chat = workbench.open_chat()
    seen = fake.counts()
    send(chat, "edit the greeting")
    card = chat.locator(".review-pending").last
    expect(card).to_contain_text("Edit src/greet.py")
    tab = page.locator(".tabs-container .tab", has_text="greet.py ↔ toolgate proposal")
    expect(tab).to_be_visible()
    modified = page.locator(".monaco-diff-editor .editor.modified .view-lines")
    expect(modified).to_contain_text("name or 'world'")
    assert target.read_text() == before  # nothing is written before Accept
    # The diff opened without taking the keyboard from the chat (where the prompt was typed).
    assert page.evaluate("() => document.activeElement?.tagName") == "IFRAME"
    workbench.shot("25-diff-review")

    # The person changes the proposal in the diff editor before accepting it.
    workbench.type_at_end_of(
        page.locator(".monaco-diff-editor .editor.modified .view-line", has_text="name or 'world'"), "  # reviewed"
    )
    expect(modified).to_contain_text("# reviewed")
    assert target.read_text() == before  # editing the proposal does not touch the real file
    page.get_by_role("button", name="Accept Proposed Change").click()

    answer = fake.next_answer("review", seen["review"])
    assert answer["decision"] == "accept"
    final = answer["files"][0]["content"]
    assert "name or 'world'}!\"  # reviewed" in final
    wait_for(lambda: target.read_text() == final, 10, "the sidecar to write the accepted text")
    expect(tab).to_have_count(0)
    expect(chat.locator(".review-accepted").last).to_contain_text("Accepted with your edits to greet.py.")
    expect(chat.locator("details.tool-done").last).to_contain_text("Applied with the user's changes")
    wait_idle(chat)
    workbench.shot("26-diff-accepted")


def test_diff_review_reject_from_the_card(fake: FakeSidecar, workbench: Workbench, code_server: CodeServer) -> None:
    page = workbench.page
    target = code_server.workspace / "src" / "greet.py"
    before = target.read_text()
    chat = workbench.open_chat()
    seen = fake.counts()
    send(chat, "edit the greeting once more")
    card = chat.locator(".review-pending").last
    expect(page.locator(".tabs-container .tab", has_text="toolgate proposal")).to_have_count(1)
    card.get_by_role("button", name="Reject…").click()
    card.get_by_label("Feedback for the agent").fill("keep it as it is")
    card.get_by_role("button", name="Reject", exact=True).click()
    assert fake.next_answer("review", seen["review"]) == {"decision": "reject", "feedback": "keep it as it is"}
    expect(page.locator(".tabs-container .tab", has_text="toolgate proposal")).to_have_count(0)
    expect(chat.locator(".review-rejected").last).to_contain_text("Rejected, with feedback: keep it as it is")
    assert target.read_text() == before
    wait_idle(chat)
    workbench.shot("27-diff-rejected")


def test_todo_list(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    send(chat, "make a todo list")
    todos = chat.locator(".todos")
    expect(todos).to_contain_text("Todos · 1 of 3 done")
    expect(todos.locator(".todo-in_progress")).to_have_text("◐Fix the empty name")
    wait_idle(chat)
    workbench.shot("28-todos")


def test_escape_interrupts_a_running_turn(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    seen = fake.counts()
    send(chat, "wait for a long time")
    expect(chat.locator("details.tool-running").last).to_contain_text("sleep 600")
    expect(chat.locator("button.stop")).to_be_visible()
    chat.locator(".composer-input").press("Escape")
    assert fake.next_answer("interrupt", seen["interrupt"])["sessionId"].startswith("fake-")
    expect(chat.locator("details.tool-error").last).to_contain_text("Interrupted")
    wait_idle(chat)
    workbench.shot("29-interrupted")


def test_approval_as_a_notification_when_the_chat_is_hidden(fake: FakeSidecar, workbench: Workbench) -> None:
    page = workbench.page
    chat = workbench.open_chat()
    seen = fake.counts()
    send(chat, "run the tests")
    card = chat.locator(".approval-pending").last
    expect(card).to_be_visible()
    workbench.activity("Explorer").click()  # the chat is hidden while the card waits
    toast = page.locator(".notifications-toasts .notification-toast", has_text="toolgate wants to run Bash")
    expect(toast).to_be_visible()
    expect(toast).to_contain_text("No rule allows Bash(pytest -q) yet")
    # The question waits in its corner; the keyboard stays where the person was.
    assert page.evaluate("() => !document.activeElement?.closest('.notifications-toasts')")
    workbench.shot("30-approval-notification")
    toast.get_by_role("button", name="Allow once").click()
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    chat = workbench.open_chat()
    expect(chat.locator(".approval-allowed").last).to_contain_text("Allowed once.")
    wait_idle(chat)
