"""The changes bar above the composer in a real VS Code (issue 30), with the real sidecar and the mock model: a
turn changes two files with Bash; the bar says so, takes the keyboard from its keybinding, undoes one file and keeps
the other by keyboard, and says what it did in the bar itself. An agent file the person edited on the agent's lines
after the turn is shown as a conflict as soon as it is saved, left as it is by Undo all, with keep mine / take the
undo / open merge.
"""

from __future__ import annotations

import re

import pytest
import test_real_flows
from codeserver import CodeServer, wait_for
from playwright.sync_api import FrameLocator, Locator, Page, expect
from test_flows import wait_idle
from test_real_flows import MockFactory, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

mock_model = test_real_flows.mock_model

BOTH = "sed -i 's/Hello/Goodbye/' src/greet.py && sed -i 's/Demo workspace/DEMO workspace/' README.md"


def _turn(workbench: Workbench, mock_model: MockFactory, command: str) -> FrameLocator:
    mock_model(
        [
            {"text": "Changing them.", "tool_uses": [{"name": "Bash", "input": {"command": command}}]},
            {"text": "They are changed."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Change them.")
    chat.locator(".approval-pending").last.get_by_role("button", name="Allow once").click()
    expect(chat.locator(".msg-assistant").last).to_contain_text("They are changed.")
    wait_idle(chat)
    return chat


def _tab_to(page: Page, target: Locator) -> None:
    """Press Tab until `target` has the keyboard (the bar's buttons are in the page's tab order)."""
    for _ in range(20):
        if target.evaluate("element => element === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError("Tab never reached the button")


def test_undo_and_keep_per_file_from_the_changes_bar_by_keyboard(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    greet = code_server.workspace / "src" / "greet.py"
    readme = code_server.workspace / "README.md"
    greet_before, readme_before = greet.read_bytes(), readme.read_bytes()
    try:
        chat = _turn(workbench, mock_model, BOTH)
        greet_after = greet.read_bytes()
        assert b"Goodbye" in greet_after and b"DEMO" in readme.read_bytes()
        bar = chat.locator(".changes-bar")
        expect(bar.locator(".changes-summary")).to_have_text(re.compile(r"^2 files changed \+2 −2$"))
        workbench.shot("300-changes-bar")

        page.keyboard.press("Control+Alt+C")  # the keybinding gives the bar the keyboard
        expect(bar.locator("button:focus")).to_have_count(1)
        _tab_to(page, bar.locator(".changes-file[data-path='README.md'] .changes-undo"))
        page.keyboard.press("Enter")
        wait_for(lambda: readme.read_bytes() == readme_before, 30, "README.md to be undone")
        notice = bar.locator(".changes-notice")
        expect(notice).to_contain_text("Undid the agent’s changes in README.md.")
        expect(notice.get_by_role("button", name="Redo")).to_be_visible()
        expect(bar.locator(".changes-file")).to_have_count(1)
        workbench.shot("301-changes-bar-undone")

        _tab_to(page, bar.locator(".changes-file[data-path='src/greet.py'] .changes-keep"))
        page.keyboard.press("Enter")
        expect(bar.locator(".changes-file")).to_have_count(0)
        expect(notice).to_contain_text("Kept the agent’s changes in src/greet.py.")
        assert greet.read_bytes() == greet_after  # Keep changes no file
        page.keyboard.press("Escape")  # back to the composer, not an interrupt
        expect(chat.locator(".composer-input")).to_be_focused()
    finally:
        greet.write_bytes(greet_before)
        readme.write_bytes(readme_before)


def test_an_agent_file_the_person_edited_since_is_a_conflict_not_overwritten(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    greet = code_server.workspace / "src" / "greet.py"
    greet_before = greet.read_bytes()
    try:
        chat = _turn(workbench, mock_model, "sed -i 's/Hello/Goodbye/' src/greet.py")
        bar = chat.locator(".changes-bar")
        row = bar.locator(".changes-file[data-path='src/greet.py']")
        expect(row).to_be_visible()
        mine = greet.read_bytes().replace(b"Goodbye", b"Farewell, said the person")
        greet.write_bytes(mine)  # the person, after the turn, on the agent's line

        # The bar lists again when a file it shows changes on disk: the conflict shows before anyone clicks Undo.
        expect(row.locator(".changes-counts")).to_have_text("conflict")
        expect(row.get_by_role("button", name="Undo", exact=True)).to_have_count(0)
        bar.get_by_role("button", name="Undo all").click()
        notice = bar.locator(".changes-notice")
        expect(notice).to_contain_text("src/greet.py was left as it is, because you changed it where the agent did")
        assert greet.read_bytes() == mine  # left as it is
        expect(row.get_by_role("button", name="Keep mine")).to_be_visible()
        expect(row.get_by_role("button", name="Open merge")).to_be_visible()
        workbench.shot("302-changes-bar-conflict")

        row.get_by_role("button", name="Take the undo").click()
        wait_for(lambda: greet.read_bytes() == greet_before, 30, "the undo to be taken")
        expect(bar.locator(".changes-file")).to_have_count(0)
    finally:
        greet.write_bytes(greet_before)
