"""The composer in a real VS Code, against the real sidecar and the mock model: an `@` mention and "Add Selection to
Chat" reach the model as text blocks with their paths and lines; `/model` switches the model of the next request."""

from __future__ import annotations

import json
import re

import pytest
from codeserver import CodeServer, wait_for
from playwright.sync_api import expect
from test_real_flows import MockFactory, mock_model
from workbench import TIMEOUT_MS, Workbench

pytestmark = pytest.mark.e2e
__all__ = ["mock_model"]  # the fixture, used by name


def open_file(workbench: Workbench, name: str) -> None:
    page = workbench.page
    page.keyboard.press("Escape")
    page.keyboard.press("F1")
    box = page.locator(".quick-input-widget input.input")
    box.wait_for(state="visible", timeout=TIMEOUT_MS)
    box.fill(name)  # without the leading '>': files, not commands
    page.locator(".quick-input-widget .quick-input-list .monaco-list-row", has_text=name).first.click()
    expect(page.locator(".tabs-container .tab.active", has_text=name)).to_be_visible()


def test_a_mention_and_a_selection_reach_the_model(
    mock_model: MockFactory, workbench: Workbench, code_server: CodeServer
) -> None:
    page = workbench.page
    model = mock_model([{"text": "I see both."}])

    # The selection: lines 4-5 of greet.py, attached from the command palette ("Add Selection to Chat").
    open_file(workbench, "greet.py")
    page.locator(".monaco-editor .view-line", has_text="def greet").click()
    page.keyboard.press("Home")
    page.keyboard.press("Shift+ArrowDown")
    page.keyboard.press("Shift+End")
    # F1 straight away: Escape (which Workbench.run_command presses first) would drop the editor's selection.
    page.keyboard.press("F1")
    page.locator(".quick-input-widget input.input").fill(">Add Selection to Chat")
    page.locator(".quick-input-widget .monaco-list-row", has_text="Add Selection to Chat").first.click()
    chat = workbench.open_chat()
    expect(chat.locator(".composer-chips .chip", has_text="src/greet.py:4-5")).to_be_visible()

    # The mention: @ opens the list, typing filters it, the keyboard picks the README.
    composer = chat.locator(".composer-input")
    composer.click()
    composer.press_sequentially("Compare with @READ")
    listbox = chat.get_by_role("listbox", name="Suggestions")
    expect(listbox.get_by_role("option").first).to_contain_text("README.md")
    expect(composer).to_have_attribute("aria-expanded", "true")
    composer.press("Enter")
    expect(listbox).to_be_hidden()
    expect(composer).to_have_value("Compare with @README.md ")
    expect(chat.locator(".composer-chips .chip", has_text="README.md")).to_be_visible()
    workbench.shot("60-composer-chips")
    composer.press("Enter")

    expect(chat.locator(".msg-assistant").last).to_contain_text("I see both.")
    expect(chat.locator(".composer-chips")).to_be_hidden()  # sent with the message
    wait_for(lambda: len(model.requests()) == 1, 30, "the request to reach the mock model")
    prompt = json.dumps(model.requests()[0]["body"]["messages"][-1])
    assert "Compare with @README.md" in prompt, prompt
    assert "The person attached src/greet.py, lines 4-5 of 9:\\n4\\tdef greet(name: str) -> str:" in prompt, prompt
    assert "The person attached README.md, the whole file:" in prompt, prompt


def test_slash_model_switches_the_model_of_the_next_request(mock_model: MockFactory, workbench: Workbench) -> None:
    model = mock_model([{"text": "first answer"}, {"text": "second answer"}])
    chat = workbench.open_chat()
    composer = chat.locator(".composer-input")
    composer.fill("hello")
    composer.press("Enter")
    expect(chat.locator(".msg-assistant").last).to_contain_text("first answer")

    # / completes the commands; the keyboard picks /model, and its argument follows.
    composer.click()
    composer.press_sequentially("/mo")
    expect(chat.get_by_role("listbox", name="Suggestions").get_by_role("option").first).to_contain_text("/model")
    composer.press("Tab")
    expect(composer).to_have_value("/model ")
    composer.press_sequentially("mock-model-large")
    composer.press("Enter")
    expect(chat.locator(".notice").last).to_contain_text("Chats use mock-model-large")
    expect(chat.get_by_label("Model")).to_have_value("mock-model-large")
    expect(chat.locator(".provider-status")).to_contain_text("mock-model-large")

    composer.fill("again")
    composer.press("Enter")
    expect(chat.locator(".msg-assistant").last).to_contain_text("second answer")
    wait_for(lambda: len(model.requests()) == 2, 30, "both requests to reach the mock model")
    first, second = (request["body"]["model"] for request in model.requests())
    assert second == "mock-model-large" and first != second, (first, second)

    # The picker lists the provider's models (the mock's models API).
    chat.get_by_label("Model").focus()
    expect(chat.get_by_label("Model").locator("option", has_text=re.compile(r"^mock-model$"))).to_have_count(1)
    workbench.shot("61-composer-model")
