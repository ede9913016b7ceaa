"""The settings banner folds away (issue 20): a broken permission settings file shows its banner, which folds to its
one-line title (giving the conversation its room back), unfolds on request, and unfolds by itself when the problems
change. With the real sidecar, as test_extension.py's banner test.

Screenshots: test-results/e2e/95-… and 96-….
"""

from __future__ import annotations

import re

import pytest
from codeserver import CodeServer
from playwright.sync_api import FrameLocator, expect
from workbench import Workbench

pytestmark = pytest.mark.e2e

BROKEN = '{\n  "permissions": {\n    "allow": "Bash(ls)"\n  }\n}\n'
BROKEN_OTHERWISE = '{\n  "permissions": {\n    "deny": "Read(.env)"\n  }\n}\n'


def transcript_height(chat: FrameLocator) -> int:
    height: int = chat.locator(".transcript").evaluate("(element) => element.clientHeight")
    return height


def test_the_settings_banner_folds_to_one_line_and_opens_again_when_the_problems_change(
    workbench: Workbench, code_server: CodeServer
) -> None:
    broken = code_server.workspace / ".toolgate" / "settings.json"
    broken.parent.mkdir(exist_ok=True)
    broken.write_text(BROKEN)
    chat = workbench.open_chat()
    # The real sidecar, ready: after a module that used the fake one, the fake may still say ready for a moment.
    expect(chat.locator(".sidecar-status .status-text")).to_have_attribute("title", re.compile(r"· toolgate \d"))
    expect(chat.locator(".sidecar-status")).to_have_attribute("data-state", "ready")
    banner = chat.locator(".settings-problems")
    try:
        chat.get_by_role("button", name="New").click()  # a new session reads the settings files
        expect(banner).to_contain_text("A permission setting is not in force")
        expect(banner.get_by_role("button", name="Open file")).to_be_visible()
        unfolded = transcript_height(chat)
        hide = banner.get_by_role("button", name="Hide")
        expect(hide).to_have_attribute("aria-expanded", "true")
        hide.click()

        # Folded: the title stays (the problem is still there), the details go, the conversation gets the room.
        expect(banner).to_have_attribute("data-folded", "true")
        expect(banner).to_contain_text("A permission setting is not in force")
        expect(banner.get_by_role("button", name="Open file")).to_have_count(0)
        show = banner.get_by_role("button", name="Show")
        expect(show).to_be_focused()  # the keyboard stays on the control that was used
        expect(show).to_have_attribute("aria-expanded", "false")
        folded = transcript_height(chat)
        assert folded > unfolded + 40, (unfolded, folded)
        assert banner.evaluate("(element) => element.offsetHeight") <= 40
        workbench.shot("95-settings-banner-folded")

        # Enter on Show opens it again; folded again, it stays folded while the problems are the same…
        show.press("Enter")
        expect(banner).to_have_attribute("data-folded", "false")
        expect(banner.get_by_role("button", name="Open file")).to_be_visible()
        banner.get_by_role("button", name="Hide").click()
        chat.get_by_role("button", name="New").click()
        expect(chat.locator(".msg")).to_have_count(0)
        expect(banner).to_have_attribute("data-folded", "true")

        # …and opens by itself when they change.
        broken.write_text(BROKEN_OTHERWISE)
        chat.get_by_role("button", name="New").click()
        expect(banner).to_contain_text("permissions.deny")
        expect(banner).to_have_attribute("data-folded", "false")
        workbench.shot("96-settings-banner-opened-again")
    finally:
        broken.unlink()
    chat.get_by_role("button", name="New").click()
    expect(banner).to_be_hidden()
