"""The chat panel as people use it (issue 20), in a real VS Code with the scripted fake sidecar of test_flows.py:
readable in light, dark and high-contrast themes (contrast computed from the webview's computed styles), the
pending card kept in view, Escape closing the innermost thing, messages sent during start-up, and a sidecar crash
in the middle of a turn.

Screenshots are named after the state and the theme (test-results/e2e/6x-… and 7x-…).
"""

from __future__ import annotations

import os
import re
import signal
from typing import Any

import pytest
import test_flows
from codeserver import CodeServer, wait_for
from playwright.sync_api import FrameLocator, Locator, expect
from test_flows import FakeSidecar, send, wait_idle
from workbench import Workbench

pytestmark = pytest.mark.e2e

# WCAG AA for text, and for the parts of a control one must see (a focus ring).
TEXT_CONTRAST = 4.5
RING_CONTRAST = 3.0

THEMES = {
    "light": ("Default Light Modern", "vscode-light"),
    "dark": ("Default Dark Modern", "vscode-dark"),
    "hc-dark": ("Default High Contrast", "vscode-high-contrast"),
    "hc-light": ("Default High Contrast Light", "vscode-high-contrast-light"),
}

# The contrast of an element's text against what is drawn behind it: the backgrounds of it and its ancestors,
# composited from the first opaque one up (as the browser paints them), with the text colour's own alpha. Colours
# come as rgb()/rgba(), or as color(srgb …) (what the browser computes for a color-mix()); any other form is an
# error rather than a background silently skipped.
CONTRAST_JS = """
(element, which) => {
  const parse = (value) => {
    const rgb = /^rgba?\\(([^)]+)\\)$/.exec(value);
    const srgb = /^color\\(srgb ([^)]+)\\)$/.exec(value);
    if (!rgb && !srgb) throw new Error(`a colour this measurement cannot read: ${value}`);
    const parts = (rgb ?? srgb)[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    const scale = srgb ? 255 : 1;
    return [parts[0] * scale, parts[1] * scale, parts[2] * scale, parts.length > 3 ? parts[3] : 1];
  };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3])).concat(1);
  const layers = [];
  // A focus ring is drawn outside the element (outline-offset): what is behind it is the parent's background.
  for (let node = which === 'outline' ? element.parentElement : element; node; node = node.parentElement) {
    const background = parse(getComputedStyle(node).backgroundColor);
    if (background && background[3] > 0) {
      layers.push(background);
      if (background[3] >= 1) break;
    }
  }
  if (layers.length === 0 || layers[layers.length - 1][3] < 1) return { error: 'no opaque background behind it' };
  let background = layers.pop();
  while (layers.length) background = over(layers.pop(), background);
  const style = getComputedStyle(element);
  const foreground = over(parse(which === 'outline' ? style.outlineColor : style.color), background);
  const luminance = (rgb) => {
    const [r, g, b] = rgb.slice(0, 3).map((channel) => {
      const c = channel / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
  return {
    ratio: (light + 0.05) / (dark + 0.05),
    color: style.color,
    background: `rgb(${background.slice(0, 3).map(Math.round).join(', ')})`,
    outline: `${style.outlineStyle} ${style.outlineWidth}`,
  };
}
"""


# The scripted fake sidecar, set up as test_flows.py sets it up (a module fixture: one for this module).
fake = test_flows.fake


def use_theme(code_server: CodeServer, fake: FakeSidecar, chat: FrameLocator, theme: str) -> None:
    name, body_class = THEMES[theme]
    code_server.write_workspace_settings({"toolgate.python.path": str(fake.python), "workbench.colorTheme": name})
    expect(chat.locator(f"body.{body_class}")).to_have_count(1)


def contrast(locator: Locator, which: str = "text") -> dict[str, Any]:
    result: dict[str, Any] = locator.evaluate(CONTRAST_JS, which)
    assert "error" not in result, f"{locator}: {result}"
    return result


@pytest.mark.parametrize("theme", ["light", "dark", "hc-dark", "hc-light"])
def test_approval_card_is_readable_in_every_theme_kind(
    theme: str, fake: FakeSidecar, workbench: Workbench, code_server: CodeServer
) -> None:
    chat = workbench.open_chat()
    use_theme(code_server, fake, chat, theme)
    seen = fake.counts()
    send(chat, "run the tests")
    card = chat.locator(".approval-pending").last
    command = card.locator(".card-summary code")
    expect(command).to_have_text("pytest -q")
    card.get_by_role("button", name="Deny…").click()
    expect(card.get_by_label("Feedback for the agent")).to_be_focused()

    measured: dict[str, dict[str, Any]] = {"command": contrast(command)}
    names = ["Allow once", "Always allow…", "Deny…", "Deny"]
    buttons = {name: card.get_by_role("button", name=name, exact=True) for name in names}
    buttons["Stop"] = chat.locator("button.stop")
    for name, button in buttons.items():
        measured[name] = contrast(button)
        button.hover()  # and under the mouse, where some themes' hover colours are overlays
        measured[f"{name} (hover)"] = contrast(button)
    workbench.page.mouse.move(900, 450)
    low = {name: value for name, value in measured.items() if value["ratio"] < TEXT_CONTRAST}
    assert not low, f"below {TEXT_CONTRAST}:1 in {theme}: {low}"

    # The focus ring of a button reached by keyboard is drawn, and stands out from what is behind it.
    deny = card.get_by_role("button", name="Deny", exact=True)
    card.get_by_label("Feedback for the agent").press("Tab")
    expect(deny).to_be_focused()
    ring = contrast(deny, "outline")
    assert ring["outline"].startswith("solid"), ring
    assert ring["ratio"] >= RING_CONTRAST, f"focus ring in {theme}: {ring}"
    workbench.shot(f"60-approval-pending-{theme}")

    deny.press("Enter")
    assert fake.next_answer("approval", seen["approval"])["decision"] == "deny"
    wait_idle(chat)
    send_button = chat.locator("button.send")
    assert contrast(send_button)["ratio"] >= TEXT_CONTRAST
    workbench.shot(f"61-approval-denied-{theme}")


def visible_in_transcript(chat: FrameLocator, element: Locator) -> dict[str, float]:
    """The element's box and the transcript's visible box, in the webview's coordinates."""
    box: dict[str, float] = element.evaluate(
        """(element) => {
          const view = element.closest('.transcript').getBoundingClientRect();
          const card = element.getBoundingClientRect();
          return { top: card.top, bottom: card.bottom, viewTop: view.top, viewBottom: view.bottom };
        }"""
    )
    return box


def test_pending_card_stays_in_view_when_the_todo_list_grows(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    chat.get_by_role("button", name="New").click()
    expect(chat.locator(".msg")).to_have_count(0)
    for turn in range(4):  # enough conversation to scroll at 860 px with the todo list open
        send(chat, f"make a todo list, turn {turn}")
        expect(chat.locator(".msg-assistant")).to_have_count(turn + 1)  # the turn has started…
        wait_idle(chat)  # …and ended
    seen = fake.counts()
    send(chat, "run the tests and grow the plan")
    card = chat.locator(".approval-pending").last
    expect(card).to_be_visible()
    expect(chat.locator(".todos")).to_contain_text("0 of 12 done")  # it grew while the card waited
    transcript = chat.locator(".transcript")
    # The decision is made again after the list took its height: the whole card is inside the visible transcript.
    box = visible_in_transcript(chat, card)
    assert box["top"] >= box["viewTop"] - 1 and box["bottom"] <= box["viewBottom"] + 1, box
    assert transcript.evaluate("(element) => element.scrollHeight > element.clientHeight"), "not a scrolling case"
    workbench.shot("62-pending-card-after-todos-grew")
    card.get_by_role("button", name="Allow once").click()
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    wait_idle(chat)

    # Scrolled up by the person: the view stays there and offers the way back.
    transcript.hover()
    workbench.page.mouse.wheel(0, -5000)
    jump = chat.get_by_role("button", name="Jump to latest ↓")
    expect(jump).to_be_visible()
    workbench.shot("63-scrolled-up-jump-to-latest")
    jump.click()
    expect(jump).to_be_hidden()
    assert transcript.evaluate("(e) => e.scrollHeight - e.scrollTop - e.clientHeight < 24")


def test_escape_in_reject_feedback_closes_the_box_and_keeps_the_review(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    seen = fake.counts()
    send(chat, "edit the greeting")
    card = chat.locator(".review-pending").last
    expect(card).to_be_visible()
    reject = card.get_by_role("button", name="Reject…")
    reject.click()
    feedback = card.get_by_label("Feedback for the agent")
    feedback.fill("keep the old greeting")
    feedback.press("Escape")
    expect(feedback).to_be_hidden()
    expect(reject).to_be_focused()
    expect(chat.locator(".review-pending")).to_have_count(1)  # not withdrawn, not interrupted
    assert fake.counts() == seen
    workbench.shot("64-escape-closed-reject-feedback")

    reject.press("Enter")
    expect(feedback).to_have_value("keep the old greeting")  # what was typed is still there
    card.get_by_role("button", name="Reject", exact=True).click()
    assert fake.next_answer("review", seen["review"]) == {"decision": "reject", "feedback": "keep the old greeting"}
    wait_idle(chat)
    # With nothing open, Escape from the composer still interrupts.
    send(chat, "wait for a long time")
    expect(chat.locator("details.tool-running").last).to_contain_text("sleep 600")
    chat.locator(".composer-input").press("Escape")
    assert fake.next_answer("interrupt", seen["interrupt"])["sessionId"].startswith("fake-")
    wait_idle(chat)


def restart(code_server: CodeServer, fake: FakeSidecar, settings: dict[str, Any]) -> None:
    """Change settings that restart the sidecar, and wait until the new process runs (the header may still show the
    old one's "ready" for a moment)."""
    started = len(fake.answers("started"))
    code_server.write_workspace_settings(settings)
    wait_for(lambda: len(fake.answers("started")) > started, 30, "the sidecar to be started again")


def test_a_message_sent_during_start_up_is_answered(
    fake: FakeSidecar, workbench: Workbench, code_server: CodeServer
) -> None:
    slow = code_server.root / "slow-fake-python"
    slow.write_text(f'#!/bin/sh\nTOOLGATE_FAKE_START_DELAY=4 exec "{fake.python}" "$@"\n')
    slow.chmod(0o755)
    chat = workbench.open_chat()
    status = chat.locator(".sidecar-status")
    code_server.write_workspace_settings({"toolgate.python.path": str(slow)})  # restarts the sidecar
    expect(status).to_have_attribute("data-state", "starting")
    send(chat, "hello while starting")
    queued = chat.locator(".msg-user.queued").last
    expect(queued).to_contain_text("hello while starting")
    expect(queued).to_contain_text("Waits for the sidecar to be ready")
    expect(chat.locator(".composer-input")).to_have_value("")
    workbench.shot("65-message-queued-during-start-up")
    expect(status).to_have_attribute("data-state", "ready")
    expect(chat.locator(".msg-user").last).to_have_text("hello while starting")
    expect(chat.locator(".msg-assistant").last).to_contain_text("Working on it.")
    expect(chat.locator(".transcript")).not_to_contain_text("not running")
    wait_idle(chat)
    workbench.shot("66-queued-message-answered")
    restart(code_server, fake, {"toolgate.python.path": str(fake.python)})
    expect(status).to_have_attribute("data-state", "ready")


def test_kill_9_of_the_sidecar_mid_turn_ends_the_card(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready")
    send(chat, "wait for a long time")
    tool = chat.locator("details.tool").last
    expect(tool).to_have_class("tool tool-running")
    pid = fake.answers("started")[-1]["pid"]
    os.kill(pid, signal.SIGKILL)
    expect(tool).to_have_class("tool tool-error")
    expect(tool.locator(".tool-result-summary")).to_have_text("Interrupted: the sidecar stopped")
    expect(tool.locator(".tool-duration")).not_to_have_attribute("data-running", "")
    notice = chat.locator(".notice-error").last
    expect(notice).to_contain_text("The toolgate sidecar stopped unexpectedly")
    expect(notice).to_contain_text("The turn that was running has ended")
    expect(chat.locator(".transcript")).not_to_contain_text("Pending response rejected")
    expect(chat.locator("button.send")).to_be_visible()
    workbench.shot("67-sidecar-killed-mid-turn")
    expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready")
    send(chat, "make a todo list")  # the restarted sidecar answers the next message (nothing waits for the lost one)
    expect(chat.get_by_text("Fix the empty name", exact=True)).to_be_visible()  # only this turn makes a todo list
    expect(chat.locator(".notice", has_text="A turn is still running")).to_have_count(0)
    wait_idle(chat)


def test_keyboard_open_chat_answer_a_card_and_accept_a_review_by_keybinding(
    fake: FakeSidecar, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    chat = workbench.open_chat()
    expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready")
    workbench.activity("Explorer").click()  # the chat is hidden; from here on, only the keyboard
    expect(page.locator(".explorer-folders-view, .explorer-viewlet").first).to_be_visible()
    page.keyboard.press("Control+Alt+G")  # toolgate: Open Chat
    composer = chat.locator(".composer-input")
    expect(composer).to_be_focused()

    seen = fake.counts()
    page.keyboard.type("run the tests")
    page.keyboard.press("Enter")
    card = chat.locator(".approval-pending").last
    expect(card).to_be_focused()  # a new card takes the keyboard while the composer is empty; Enter answers nothing
    workbench.shot("68-keyboard-pending-card-focused")
    page.keyboard.press("Tab")
    expect(card.get_by_role("button", name="Allow once")).to_be_focused()
    page.keyboard.press("Enter")
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    expect(composer).to_be_focused()  # back where the next message is typed
    wait_idle(chat)

    page.keyboard.type("edit the greeting")
    page.keyboard.press("Enter")
    review = chat.locator(".review-pending").last
    expect(review).to_be_focused()
    # Reading the diff: Show diff puts the cursor in the proposal, where the review's keybinding accepts it.
    for _ in range(3):
        page.keyboard.press("Tab")  # the file's name, Accept, Reject…
    show = review.get_by_role("button", name="Show diff")
    page.keyboard.press("Tab")
    expect(show).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".monaco-diff-editor .editor.modified .monaco-editor.focused")).to_have_count(1)
    page.keyboard.press("Control+Alt+Enter")  # toolgate: Accept Proposed Change
    assert fake.next_answer("review", seen["review"])["decision"] == "accept"
    expect(chat.locator(".review-accepted").last).to_be_visible()
    expect(composer).to_be_focused()  # the keyboard is back in the chat
    wait_idle(chat)
    workbench.shot("69-keyboard-review-accepted")
    # Put the greeting back for the tests that follow.
    target = code_server.workspace / "src" / "greet.py"
    target.write_text(target.read_text().replace("{name or 'world'}", "{name}"))


def conversation_share(chat: FrameLocator) -> float:
    """The transcript's height as a share of the chat view's."""
    share: float = chat.locator(".transcript").evaluate("(element) => element.clientHeight / window.innerHeight")
    return share


def test_the_conversation_gets_most_of_the_panel(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    header = chat.locator(".header")
    # The state and the model in one line (versions in the tooltip), then the pickers: three rows at 300 px.
    assert header.evaluate("(element) => element.offsetHeight") <= 100
    status = chat.locator(".sidecar-status .status-text")
    expect(status).to_have_attribute("title", re.compile(r"^Sidecar ready · toolgate-fake 0\.0\.0-fake · Python 3\."))
    seen = fake.counts()
    send(chat, "run the tests and grow the plan")
    card = chat.locator(".approval-pending").last
    todos = chat.locator(".todos")
    expect(todos).to_contain_text("0 of 12 done")
    open_share = conversation_share(chat)
    workbench.shot("70-twelve-todos-open")
    todos.locator("summary").click()  # folded: its title still counts
    expect(todos).not_to_have_attribute("open", "")
    folded_share = conversation_share(chat)
    print(f"conversation share at 300 px with 12 todos: open {open_share:.0%}, folded {folded_share:.0%}")
    assert open_share >= 0.45 and folded_share >= 0.65, (open_share, folded_share)
    workbench.shot("71-twelve-todos-folded")
    card.get_by_role("button", name="Allow once").click()
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    wait_idle(chat)
    todos.locator("summary").click()
    expect(todos).to_have_attribute("open", "")
