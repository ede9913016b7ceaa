"""`make demo` walked with the keyboard alone (issue 20): open the chat by its keybinding, send the message, allow
the command from its card, open the proposed edit's diff from the review card, accept it there by the review's
keybinding, and get the keyboard back in the composer for the next message. Only `page.keyboard` drives the
browser, and every frame (the workbench and the webviews inside it) counts the pointer events it saw: none.
"""

from __future__ import annotations

import contextlib
import re

import pytest
import test_demo
from codeserver import wait_for
from playwright.sync_api import BrowserContext, Page, expect
from playwright.sync_api import Error as PlaywrightError
from test_demo import GREET_AFTER_THE_DEMO, Demo, demo_workbench

pytestmark = pytest.mark.e2e

# The `make demo` launcher, as test_demo.py starts it.
demo = test_demo.demo

# Every frame counts the pointer events it receives (a click from the keyboard is a `click` with no `pointerdown`
# before it, so pointerdown/mousedown/mousemove/wheel are what a mouse, and only a mouse, sends). A webview writes
# its inner frame with document.open(), which drops the window's listeners: the new document gets them again.
COUNT_POINTER_EVENTS = """
(() => {
  window.__pointerEvents = window.__pointerEvents || [];
  const install = () => {
    const root = document.documentElement;
    if (!root || root.__countsPointers) return;
    root.__countsPointers = true;
    const seen = (event) => window.__pointerEvents.push(`${event.type} on ${event.target?.tagName}`);
    for (const type of ['pointerdown', 'mousedown', 'mouseup', 'mousemove', 'wheel', 'contextmenu']) {
      window.addEventListener(type, seen, true);
    }
  };
  install();
  setInterval(install, 20);
})();
"""


def pointer_events(page: Page) -> dict[str, list[str]]:
    """The pointer events each frame has seen; every frame must be counting (the webviews' inner frames too)."""
    seen: dict[str, list[str]] = {}
    counting = 0
    for frame in page.frames:
        events: list[str] | None = None
        with contextlib.suppress(PlaywrightError):  # a frame that went away while we asked
            events = frame.evaluate(
                "() => (document.documentElement.__countsPointers && window.__pointerEvents) || null"
            )
        if events is None:
            continue
        counting += 1
        if events:
            seen[frame.url[:80]] = events
    webview_frames = [frame for frame in page.frames if "active-frame" in frame.name or "webview" in frame.url]
    frames = [frame.url[:60] for frame in page.frames]
    assert counting == len(page.frames) and webview_frames, f"not every frame counts: {frames}"
    return seen


def test_make_demo_with_the_keyboard_alone(demo: Demo, browser: BrowserContext) -> None:
    greet = demo.workspace / "src" / "greet.py"
    original = greet.read_text()
    with demo_workbench(browser, demo, "keyboard-demo", COUNT_POINTER_EVENTS) as bench:
        page = bench.page
        keyboard = page.keyboard
        chat = bench.chat
        # The extension's contributions (its keybindings with them) have reached the workbench once its entry shows.
        expect(bench.activity("toolgate")).to_be_visible()
        keyboard.press("Control+Alt+G")  # toolgate: Open Chat
        composer = chat.locator(".composer-input")
        expect(composer).to_be_focused()
        expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready", timeout=60_000)

        keyboard.type("Show me what toolgate does.")
        keyboard.press("Enter")
        # The command's card takes the keyboard (the composer is empty); Tab reaches Allow once.
        card = chat.locator(".approval-pending").last
        expect(card).to_contain_text("python3 src/greet.py")
        expect(card).to_be_focused()
        keyboard.press("Tab")
        expect(card.get_by_role("button", name="Allow once")).to_be_focused()
        bench.shot("80-keyboard-demo-approval")
        keyboard.press("Enter")
        expect(chat.locator("details.tool-done[data-tool=Bash]")).to_contain_text("Hello, world!")

        # The review card takes the keyboard in turn; its file's name opens the diff with the cursor in it.
        review = chat.locator(".review-pending").last
        expect(review).to_be_focused()
        keyboard.press("Tab")
        file_button = review.get_by_role("button", name="src/greet.py")
        expect(file_button).to_be_focused()
        keyboard.press("Enter")
        proposal = page.locator(".monaco-diff-editor .editor.modified .monaco-editor.focused")
        expect(proposal).to_have_count(1)
        expect(page.locator(".tabs-container .tab.active", has_text="greet.py ↔ toolgate proposal")).to_be_visible()
        # The breadcrumbs name the file by its own path, not by toolgate's internal review id.
        crumbs = page.locator(".editor-group-container.active .monaco-breadcrumbs")
        expect(crumbs).to_contain_text("greet.py")
        expect(crumbs).not_to_contain_text(re.compile(r"\br\d+-\d+"))
        assert greet.read_text() == original
        bench.shot("81-keyboard-demo-diff-focused")
        keyboard.press("Control+Alt+Enter")  # toolgate: Accept Proposed Change, the review editor's keybinding
        wait_for(lambda: greet.read_text() == GREET_AFTER_THE_DEMO, 30, "the accepted edit on disk")

        # The closing summary; the keyboard is back in the composer, and the next message goes from there.
        expect(chat.locator(".msg-assistant").last).to_contain_text("That is the whole demo.")
        # Finished, the list is no longer pinned under the conversation: its last TodoWrite card says it is done.
        expect(chat.locator(".todos")).to_be_hidden()
        done = chat.locator("details.tool[data-tool=TodoWrite]").last.locator(".tool-summary")
        expect(done).to_have_text("4 of 4 done")
        expect(chat.locator("button.send")).to_be_visible()  # the turn has ended
        expect(composer).to_be_focused()
        keyboard.type("Anything else?")
        keyboard.press("Enter")
        expect(chat.locator(".msg-assistant").last).to_contain_text("The demo's script is over")
        expect(chat.locator(".notice-error")).to_have_count(0)
        bench.shot("82-keyboard-demo-done")
        assert pointer_events(page) == {}, "a pointer event reached the page: the run was not keyboard-only"
