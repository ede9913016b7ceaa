"""The VS Code workbench in headless Chromium, and the few moves the end-to-end tests make in it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from codeserver import REPO
from playwright.sync_api import FrameLocator, Locator, Page, expect

SHOTS = REPO / "test-results" / "e2e"
CHROMIUM = "/usr/bin/chromium"
# Chromium on a machine whose network only reaches package registries: no background fetches, no GPU, no sandbox
# (the tests run as root).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 30_000


class Server(Protocol):
    """A running code-server: ours (codeserver.CodeServer), or one a launcher started in another process."""

    @property
    def url(self) -> str: ...

    def log_tail(self, lines: int = 40) -> str: ...


class Workbench:
    """The VS Code workbench in the browser, with the few moves the tests make."""

    def __init__(self, page: Page, server: Server) -> None:
        self.page = page
        self.server = server
        self.shots: list[Path] = []

    def open(self) -> None:
        self.page.goto(self.server.url)
        self.page.locator(".monaco-workbench").wait_for(state="visible", timeout=60_000)

    def activity(self, title: str) -> Locator:
        # The whole entry (not its label), so that a badge drawn over the label still counts as the entry.
        return self.page.locator(f'.activitybar .action-item:has(> [aria-label^="{title}"])').first

    @property
    def chat(self) -> FrameLocator:
        # A webview view's page lives two iframes deep; toolgate's chat is the only webview in these tests.
        return self.page.frame_locator("iframe.webview.ready").first.frame_locator("iframe#active-frame")

    def open_chat(self) -> FrameLocator:
        entry = self.activity("toolgate")
        if "checked" not in (entry.get_attribute("class") or ""):
            entry.click()
            self.page.mouse.move(900, 450)  # off the activity bar, so its tooltip does not cover the screenshots
        self.chat.locator(".composer-input").wait_for(state="visible", timeout=TIMEOUT_MS)
        return self.chat

    def quick_open(self, text: str) -> Locator:
        """Open the command palette with `text` typed; returns the list's rows."""
        self.page.keyboard.press("Escape")
        self.page.keyboard.press("F1")
        box = self.page.locator(".quick-input-widget input.input")
        box.wait_for(state="visible", timeout=TIMEOUT_MS)
        box.fill(f">{text}")
        return self.page.locator(".quick-input-widget .quick-input-list .monaco-list-row")

    def run_command(self, title: str) -> None:
        """Run a command by its title from the command palette."""
        rows = self.quick_open(title)
        rows.filter(has_text=title).first.click()

    def type_at_end_of(self, line: Locator, text: str) -> None:
        """Type `text` at the end of an editor's line, as a person does: click the line, then, once that editor has
        the keyboard, End and the text. (On a slow machine the click lands before the editor takes focus, and keys
        pressed at once go wherever the focus still is.)"""
        line.click()
        editor = line.locator("xpath=ancestor::div[contains(concat(' ', @class, ' '), ' monaco-editor ')][1]")
        expect(editor).to_have_class(re.compile(r"\bfocused\b"))
        self.page.keyboard.press("End")
        self.page.keyboard.type(text)

    def shot(self, name: str) -> Path:
        # A toast or panel still sliding in would be caught half-way: wait for the finite animations (blinking
        # cursors run forever) to finish.
        self.page.wait_for_function(
            """() => document.getAnimations().every((animation) =>
                animation.playState !== 'running' || animation.effect?.getComputedTiming().endTime === Infinity)""",
            timeout=TIMEOUT_MS,
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        self.shots.append(path)
        return path
