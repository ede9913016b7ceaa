"""The whole product in a real VS Code: the real sidecar runs the agent loop against the local mock model
(`python -m toolgate.mockmodel`), and the person answers from the chat: allow a command from its card, review a new
file as a diff, edit the proposal and accept it. The file on disk is the person's text, and the model is told.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from codeserver import CodeServer, wait_for
from launcher import MockModelProcess
from playwright.sync_api import expect
from workbench import Workbench

pytestmark = pytest.mark.e2e


class MockModel(MockModelProcess):
    """The mock model playing `steps` (`script`: the rest of its script), recording every request it gets."""

    def __init__(self, root: Path, steps: list[dict[str, Any]], script: dict[str, Any] | None = None) -> None:
        root.mkdir(parents=True, exist_ok=True)
        path = root / "mock-script.json"
        path.write_text(json.dumps({**(script or {}), "steps": steps}))
        super().__init__(path, record=root / "mock-requests.jsonl")


MockFactory = Callable[..., MockModel]
# These flows are about the person's answers. The sandbox is on by default, and its autoAllow would run a command
# that only writes the workspace without asking, so the workspace's toolgate settings turn autoAllow off (a
# workspace may tighten it): commands still run sandboxed, and ask as before. test_sandbox_default.py keeps it on.
NO_AUTO_ALLOW = '{"sandbox": {"autoAllow": false}}\n'


@pytest.fixture
def mock_model(code_server: CodeServer, workbench: Workbench) -> Iterator[MockFactory]:
    """Start a mock model playing `steps` and point the editor at it (one per test)."""
    started: list[MockModel] = []

    toolgate_settings = code_server.workspace / ".toolgate" / "settings.json"

    def start(
        steps: list[dict[str, Any]],
        *,
        auto_allow: bool = False,
        script: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> MockModel:
        model = MockModel(Path(tempfile.mkdtemp(prefix="mock-model-", dir=code_server.root)), steps, script)
        started.append(model)
        if not auto_allow:  # read by the session the New button below starts
            toolgate_settings.parent.mkdir(exist_ok=True)
            toolgate_settings.write_text(NO_AUTO_ALLOW)
        # An OpenAI-compatible server at a base URL needs no key: the panel says so, and the chat can start. Other
        # `settings` go in the same write, so the new session below is made once the editor has read them all.
        provider = {"toolgate.provider": "openai", "toolgate.baseUrl": f"{model.url}/v1"}
        code_server.write_workspace_settings({**provider, **(settings or {})})
        chat = workbench.open_chat()
        expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready")
        expect(chat.locator(".provider-status")).to_contain_text(model.url)
        chat.get_by_role("button", name="New").click()
        return model

    try:
        yield start
    finally:
        code_server.write_workspace_settings(None)
        if toolgate_settings.exists() and toolgate_settings.read_text() == NO_AUTO_ALLOW:
            toolgate_settings.unlink()
        for model in started:
            model.stop()


def send(workbench: Workbench, text: str) -> None:
    composer = workbench.open_chat().locator(".composer-input")
    composer.fill(text)
    composer.press("Enter")


def test_allow_a_command_then_accept_an_edited_new_file(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    workspace = code_server.workspace
    hello = workspace / "src" / "hello.py"
    model = mock_model(
        [
            {
                "text": "I'll leave a marker file first.",
                "tool_uses": [{"name": "Bash", "input": {"command": "touch made-by-toolgate.txt"}}],
            },
            {
                "text": "Now the new module.",
                "tool_uses": [{"name": "Write", "input": {"file_path": str(hello), "content": "print('hello')\n"}}],
            },
            {"text": "Both are done."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Leave a marker and add a hello module.")

    # 1. The command needs approval: its card says why; Allow once runs it for real. (The editor's sessions run
    # Bash sandboxed by default, as the header says; autoAllow is off here, see NO_AUTO_ALLOW.)
    expect(chat.locator(".sandbox-state")).to_have_attribute("data-state", "on")
    expect(chat.locator(".sandbox-state")).to_have_text("sandboxed")
    expect(chat.locator(".sandbox-state")).to_have_attribute("title", re.compile("Bash commands run sandboxed"))
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
    target = hello
    assert not target.exists()  # nothing is written before Accept
    workbench.type_at_end_of(
        page.locator(".monaco-diff-editor .editor.modified .view-line", has_text="print('hello')"), "  # reviewed"
    )
    workbench.shot("41-real-diff-review")
    review.get_by_role("button", name="Accept", exact=True).click()
    wait_for(lambda: target.exists(), 30, "the sidecar to write the accepted file")
    assert target.read_text() == "print('hello')  # reviewed\n"
    expect(tab).to_have_count(0)
    expect(chat.locator(".review-accepted").last).to_contain_text("Accepted with your edits to hello.py.")

    # 3. The model hears how the person changed its proposal, and finishes.
    expect(chat.locator(".msg-assistant").last).to_contain_text("Both are done.")
    expect(chat.locator("button.send")).to_be_visible()
    requests = model.requests()
    assert len(requests) == 3
    told = json.dumps(requests[2]["body"]["messages"][-1])
    assert "reviewed" in told, told
    workbench.shot("42-real-done")


def test_reject_an_edit_and_deny_a_command_with_feedback(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    greet = code_server.workspace / "src" / "greet.py"
    original = greet.read_text()
    model = mock_model(
        [
            {"text": "Reading it first.", "tool_uses": [{"name": "Read", "input": {"file_path": str(greet)}}]},
            {
                "text": "Changing the greeting.",
                "tool_uses": [
                    {
                        "name": "Edit",
                        "input": {"file_path": str(greet), "old_string": "Hello", "new_string": "Goodbye"},
                    }
                ],
            },
            {"text": "Then I'll clean up.", "tool_uses": [{"name": "Bash", "input": {"command": "rm -rf src"}}]},
            {"text": "Understood, I'll leave both alone."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Make the greeting a farewell, then clean up.")

    review = chat.locator(".review-pending").last
    expect(review).to_contain_text("src/greet.py")
    review.get_by_role("button", name="Reject…").click()
    review.get_by_label("Feedback for the agent").fill("keep saying hello")
    review.get_by_role("button", name="Reject", exact=True).click()
    expect(chat.locator(".review-rejected").last).to_contain_text("Rejected, with feedback: keep saying hello")
    assert greet.read_text() == original  # the real file is untouched

    card = chat.locator(".approval-pending").last
    expect(card).to_contain_text("rm -rf src")
    card.get_by_role("button", name="Deny…").click()
    card.get_by_label("Feedback for the agent").fill("never delete the sources")
    card.get_by_role("button", name="Deny", exact=True).click()
    expect(chat.locator(".approval-denied").last).to_contain_text("never delete the sources")
    expect(chat.locator(".msg-assistant").last).to_contain_text("Understood, I'll leave both alone.")
    assert greet.read_text() == original and greet.parent.is_dir()
    workbench.shot("43-real-reject-and-deny")

    requests = model.requests()
    assert len(requests) == 4
    told = json.dumps(requests[2]["body"]["messages"]) + json.dumps(requests[3]["body"]["messages"])
    assert "keep saying hello" in told and "never delete the sources" in told, told


def test_always_allow_with_an_edited_rule_that_the_sidecar_checks(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    workspace = code_server.workspace
    local_settings = workspace / ".toolgate" / "settings.local.json"
    # A command whose only need is the command itself (`touch notes.txt` would also write a file, which no Bash
    # rule covers in default mode, so the card would offer no rule at all).
    makefile = workspace / "Makefile"
    makefile.write_text("notes:\n\ttouch notes.txt\n")
    model = mock_model(
        [
            {"text": "Making notes.", "tool_uses": [{"name": "Bash", "input": {"command": "make notes"}}]},
            {"text": "Noted."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Make a notes file.")
    card = chat.locator(".approval-pending").last
    expect(card).to_contain_text("make notes")
    try:
        card.get_by_role("button", name="Always allow…").click()
        rule = card.get_by_label("Rule to add")
        expect(rule).not_to_have_value("")  # a suggestion to start from

        # A typo: the sidecar refuses the rule and says why; the command still waits.
        rule.fill("Bash(make:*")
        card.get_by_role("button", name="Add rule and allow").click()
        expect(card.locator(".card-error")).to_contain_text("Not saved: The rule 'Bash(make:*' was not changed")
        expect(chat.get_by_label("Rule to add").last).to_have_value("Bash(make:*")
        assert not (workspace / "notes.txt").exists()
        workbench.shot("45-real-rule-refused")

        # A valid rule that would not cover the waiting call: said before anything is saved.
        card = chat.locator(".approval-pending").last
        card.get_by_label("Rule to add").fill("Bash(mkdir:*)")
        card.get_by_role("button", name="Add rule and allow").click()
        expect(card.locator(".card-error")).to_contain_text("Bash(mkdir:*) would not cover this call")
        expect(card.locator(".card-error")).to_contain_text("save it again to keep it anyway")
        assert not local_settings.exists() and not (workspace / "notes.txt").exists()
        workbench.shot("45b-real-rule-would-not-cover")

        # Corrected, and kept for this project, just for me.
        card = chat.locator(".approval-pending").last
        card.get_by_label("Rule to add").fill("Bash(make notes)")
        card.locator("select.scope").select_option("local")
        card.get_by_role("button", name="Add rule and allow").click()
        allowed = chat.locator(".approval-allowed").last
        expect(allowed).to_contain_text("From now on Bash(make notes) is allowed (this project, just for me)")
        wait_for(lambda: (workspace / "notes.txt").exists(), 30, "the allowed command to run")
        expect(chat.locator(".msg-assistant").last).to_contain_text("Noted.")
        assert json.loads(local_settings.read_text())["permissions"]["allow"] == ["Bash(make notes)"]
        assert len(model.requests()) == 2
        workbench.shot("46-real-rule-saved")
    finally:
        local_settings.unlink(missing_ok=True)
        (workspace / "notes.txt").unlink(missing_ok=True)
        makefile.unlink(missing_ok=True)


def test_allow_and_accept_edits_switches_the_session_so_the_next_change_runs_without_asking(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    workspace = code_server.workspace
    # `mkdir` is a command and a write: no one rule covers both in default mode, so the card offers the mode.
    model = mock_model(
        [
            {"text": "A build directory.", "tool_uses": [{"name": "Bash", "input": {"command": "mkdir build"}}]},
            {"text": "And a dist directory.", "tool_uses": [{"name": "Bash", "input": {"command": "mkdir dist"}}]},
            {"text": "Both made."},
        ]
    )
    chat = workbench.open_chat()
    try:
        expect(chat.locator("select.mode-select")).to_have_value("default")
        send(workbench, "Make the build and dist directories.")
        card = chat.locator(".approval-pending").last
        expect(card).to_contain_text("mkdir build")
        expect(card.get_by_role("button", name="Always allow…")).to_have_count(0)
        workbench.shot("47-real-accept-edits-offered")
        card.get_by_role("button", name="Allow, and accept edits").click()
        allowed = chat.locator(".approval-allowed").last
        expect(allowed).to_contain_text('This session is now in "Accept edits" mode')
        expect(chat.locator("select.mode-select")).to_have_value("acceptEdits")
        expect(chat.locator(".msg-assistant").last).to_contain_text("Both made.")
        assert (workspace / "build").is_dir() and (workspace / "dist").is_dir()
        expect(chat.locator(".approval-allowed, .approval-pending")).to_have_count(1)  # dist was not asked about
        assert len(model.requests()) == 3
        workbench.shot("48-real-accept-edits-on")
    finally:
        for made in (workspace / "build", workspace / "dist"):
            if made.is_dir():
                made.rmdir()


def test_accept_and_accept_edits_from_a_diff_review(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    workspace = code_server.workspace
    first, second = workspace / "first.txt", workspace / "second.txt"
    mock_model(
        [
            {"text": "One.", "tool_uses": [{"name": "Write", "input": {"file_path": str(first), "content": "1\n"}}]},
            {"text": "Two.", "tool_uses": [{"name": "Write", "input": {"file_path": str(second), "content": "2\n"}}]},
            {"text": "Written."},
        ]
    )
    chat = workbench.open_chat()
    try:
        send(workbench, "Write two files.")
        review = chat.locator(".review-pending").last
        expect(review).to_contain_text("first.txt")
        review.get_by_role("button", name="Accept, and accept edits").click()
        expect(chat.locator(".review-accepted").last).to_contain_text('This session is now in "Accept edits" mode')
        expect(chat.locator("select.mode-select")).to_have_value("acceptEdits")
        expect(chat.locator(".msg-assistant").last).to_contain_text("Written.")
        assert first.read_text() == "1\n" and second.read_text() == "2\n"
        expect(chat.locator(".review-accepted, .review-pending")).to_have_count(1)  # the second was not reviewed
    finally:
        first.unlink(missing_ok=True)
        second.unlink(missing_ok=True)


def test_escape_interrupts_a_long_command(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    marker = code_server.workspace / "slept.txt"
    mock_model(
        [
            {
                "text": "This takes a while.",
                "tool_uses": [{"name": "Bash", "input": {"command": f"sleep 120 && touch {marker}"}}],
            },
            {"text": "Stopped, as you asked."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Run the slow thing.")
    card = chat.locator(".approval-pending").last
    card.get_by_role("button", name="Allow once").click()
    running = chat.locator("details.tool-running", has_text="sleep 120")
    expect(running).to_be_visible()
    wait_for(lambda: any("sleep 120" in cmdline(pid) for pid in code_server.processes()), 30, "the command to run")
    chat.locator(".composer-input").press("Escape")
    expect(chat.locator("button.send")).to_be_visible()  # the turn ended
    expect(chat.locator("details.tool-error", has_text="sleep 120")).to_be_visible()
    expect(chat.locator(".notice").last).to_contain_text("Interrupted.")
    wait_for(lambda: not any("sleep 120" in cmdline(pid) for pid in code_server.processes()), 30, "sleep to be killed")
    assert not marker.exists()
    workbench.shot("44-real-interrupted")


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
