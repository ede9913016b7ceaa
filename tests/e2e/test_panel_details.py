"""The chat panel's details as people meet them (issue 20, Should fix), in a real VS Code with the scripted fake
sidecar: a call's run time apart from the time it waited for the person, its output shown once, long lines that
wrap, code blocks with Copy and a height limit, a refused API key with its fix on the notice, a composer that grows,
and Enter in Reject feedback doing what it does in Deny feedback.

Screenshots: test-results/e2e/9x-….
"""

from __future__ import annotations

import re

import pytest
import test_flows
from codeserver import wait_for
from playwright.sync_api import FrameLocator, expect
from test_flows import FakeSidecar, send, wait_idle
from workbench import Workbench

pytestmark = pytest.mark.e2e

fake = test_flows.fake


def fresh_chat(workbench: Workbench) -> FrameLocator:
    chat = workbench.open_chat()
    chat.get_by_role("button", name="New").click()
    expect(chat.locator(".msg")).to_have_count(0)
    return chat


def test_a_call_shows_its_wait_apart_from_its_run_time_and_its_output_once(
    fake: FakeSidecar, workbench: Workbench
) -> None:
    chat = fresh_chat(workbench)
    seen = fake.counts()
    send(chat, "run the tests")
    card = chat.locator(".approval-pending").last
    tool = chat.locator("details.tool[data-tool=Bash]").last
    duration = tool.locator(".tool-duration")
    expect(duration).to_have_text("waiting for you")  # the clock does not run while the person decides
    expect(duration).not_to_have_attribute("data-running", "")
    workbench.page.wait_for_timeout(1_200)  # the person takes a moment: what the card is about to count
    card.get_by_role("button", name="Allow once").click()
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    done = chat.locator("details.tool-done[data-tool=Bash]").last
    expect(done.locator(".tool-waited")).to_have_text(re.compile(r"^ · waited \d+\.\d s for you$"))
    expect(done.locator(".tool-ran")).to_have_text(re.compile(r"^\d+ ms$|^\d+\.\d s$"))
    done.locator("summary").click()
    # What the command printed, once: the result (the live output went), and the summary the result does not repeat.
    expect(done.locator("pre.tool-result")).to_have_text("2 passed, 1 failed")
    expect(done.locator("pre.live")).to_have_count(0)
    expect(done.locator(".tool-result-summary")).to_have_text("exit status 1")
    assert (done.text_content() or "").count("2 passed, 1 failed") == 1
    wait_idle(chat)
    workbench.shot("90-tool-waited-and-ran")


def test_long_lines_wrap_and_code_blocks_copy_within_a_height(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = fresh_chat(workbench)
    send(chat, "a long answer")
    wait_idle(chat)
    message = chat.locator(".msg-assistant").last
    expect(message).to_contain_text("averylongpathsegment")
    transcript = chat.locator(".transcript")
    # No sideways scrolling: the URL wraps inside the 300 px side bar.
    assert transcript.evaluate("(e) => e.scrollWidth <= e.clientWidth"), "the transcript scrolls sideways"
    assert message.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1")
    block = message.locator(".md-code-block")
    code = block.locator("pre")
    expect(code).to_contain_text("print('line 40')")
    # 40 lines, about 24 shown: the block scrolls inside itself.
    assert code.evaluate("(e) => e.scrollHeight > e.clientHeight && e.clientHeight < 30 * 20"), "no height limit"
    copy = block.get_by_role("button", name="Copy")
    workbench.shot("91-long-url-and-code-block")
    page = workbench.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=page.url.split("/?")[0])
    copy.click()  # it says "Copied" for a moment; what counts is the clipboard
    read = "() => navigator.clipboard.readText()"
    wait_for(lambda: page.evaluate(read).startswith("print('line 1')"), 30, "the code block on the clipboard")
    clipboard = page.evaluate(read)
    assert clipboard.startswith("print('line 1')\n") and clipboard.endswith("print('line 40')"), clipboard[:80]


def test_a_refused_api_key_offers_to_set_another(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = fresh_chat(workbench)
    send(chat, "refuse the key")
    notice = chat.locator(".notice-error").last
    expect(notice).to_contain_text("The provider refused the API key")
    wait_idle(chat)
    workbench.shot("92-auth-error-set-api-key")
    notice.get_by_role("button", name="Set API Key").click()
    box = workbench.page.locator(".quick-input-widget")
    expect(box).to_contain_text("API key")
    # Escape into the box itself: pressed on the page, it can reach the chat's frame before the box has focus.
    box.locator("input").press("Escape")  # nothing stored
    expect(box).to_be_hidden()


def test_the_composer_grows_with_its_text_up_to_a_limit(fake: FakeSidecar, workbench: Workbench) -> None:
    chat = workbench.open_chat()
    composer = chat.locator(".composer-input")
    composer.fill("")
    empty = composer.evaluate("(e) => e.offsetHeight")
    composer.fill("one\ntwo\nthree\nfour\nfive\nsix")
    composer.press("End")  # the input event that sizes it
    expect(composer).not_to_have_js_property("offsetHeight", empty)
    six = composer.evaluate("(e) => e.offsetHeight")
    assert six > empty * 1.5, (empty, six)
    assert composer.evaluate("(e) => e.scrollHeight <= e.clientHeight + 1"), "six lines do not all show"
    composer.fill("\n".join(f"line {n}" for n in range(60)))
    limit = composer.evaluate("(e) => [e.offsetHeight, window.innerHeight]")
    assert limit[0] <= limit[1] * 0.4 + 1, limit  # then it scrolls
    workbench.shot("93-composer-grown")
    composer.fill("")
    expect(composer).to_have_js_property("offsetHeight", empty)


def test_enter_in_reject_feedback_rejects_as_enter_in_deny_feedback_denies(
    fake: FakeSidecar, workbench: Workbench
) -> None:
    chat = fresh_chat(workbench)
    seen = fake.counts()
    send(chat, "edit the greeting")
    card = chat.locator(".review-pending").last
    card.get_by_role("button", name="Reject…").click()
    feedback = card.get_by_label("Feedback for the agent")
    feedback.press_sequentially("not like this")
    feedback.press("Shift+Enter")  # a new line, as in Deny's box
    feedback.press_sequentially("keep the old one")
    feedback.press("Enter")
    answer = fake.next_answer("review", seen["review"])
    assert answer == {"decision": "reject", "feedback": "not like this\nkeep the old one"}
    expect(chat.locator(".review-rejected").last).to_contain_text("Rejected, with feedback: not like this")
    wait_idle(chat)
