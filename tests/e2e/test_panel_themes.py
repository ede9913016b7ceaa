"""The chat panel in the four kinds of theme (light, dark, high contrast dark, high contrast light) at the default
300 px side bar, with a finished turn, a todo list and a pending approval: screenshots for a person to look at,
under test-results/panel-themes/ (the whole window, and the side bar alone), and "Allow once" measured: its text at
5:1 or more, its focus ring in the theme's focus colour at 3:1 or more. The other contrasts are measured in
test_panel.py.
"""

from __future__ import annotations

import pytest
import test_flows
from codeserver import REPO, CodeServer
from playwright.sync_api import expect
from test_flows import FakeSidecar, send, wait_idle
from test_panel import RING_CONTRAST, contrast, use_theme
from workbench import Workbench

pytestmark = pytest.mark.e2e

fake = test_flows.fake
THEME_SHOTS = REPO / "test-results" / "panel-themes"
# The primary button's text, with room above WCAG's 4.5:1 (Dark Modern's own pair measures 4.53:1).
ALLOW_ONCE_CONTRAST = 5.0
# The element's outline colour and the theme's focus colour, both as the browser computes them.
THEME_FOCUS_JS = """
(element) => {
  const probe = document.createElement('span');
  probe.style.color = 'var(--vscode-focusBorder)';
  document.body.append(probe);
  const focus = getComputedStyle(probe).color;
  probe.remove();
  return [getComputedStyle(element).outlineColor, focus];
}
"""


@pytest.mark.parametrize("theme", ["light", "dark", "hc-dark", "hc-light"])
def test_the_panel_in_each_theme_kind_at_300_px(
    theme: str, fake: FakeSidecar, workbench: Workbench, code_server: CodeServer
) -> None:
    chat = workbench.open_chat()
    use_theme(code_server, fake, chat, theme)
    chat.get_by_role("button", name="New").click()
    expect(chat.locator(".msg")).to_have_count(0)
    seen = fake.counts()
    send(chat, "run the tests")
    chat.locator(".approval-pending").get_by_role("button", name="Allow once").click()
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    expect(chat.locator("details.tool-done")).to_have_count(1)
    wait_idle(chat)  # a finished turn, its command's card done…
    seen = fake.counts()
    send(chat, "make a todo list and run the tests again")
    card = chat.locator(".approval-pending").last
    expect(card).to_be_visible()  # …and a pending approval, with the todo list below the conversation
    expect(chat.locator(".todos")).to_contain_text("1 of 3 done")
    # "Allow once" with a margin over 4.5:1 in every theme, and its focus ring in the theme's own focus colour.
    allow = card.get_by_role("button", name="Allow once")
    expect(card).to_be_focused()  # a new card takes the keyboard; Tab reaches its first choice
    card.press("Tab")
    expect(allow).to_be_focused()
    measured = contrast(allow)
    assert measured["ratio"] >= ALLOW_ONCE_CONTRAST, f"Allow once in {theme}: {measured}"
    ring = contrast(allow, "outline")
    assert ring["outline"].startswith("solid"), ring
    assert ring["ratio"] >= RING_CONTRAST, f"focus ring in {theme}: {ring}"
    outline, focus_colour = allow.evaluate(THEME_FOCUS_JS)
    assert outline == focus_colour, f"the ring is {outline}, the theme's focus colour {focus_colour}"
    sidebar = workbench.page.locator(".part.sidebar")
    width = sidebar.evaluate("(element) => element.getBoundingClientRect().width")
    assert abs(width - 300) <= 2, f"the side bar is {width} px wide"
    workbench.shot(f"panel-theme-{theme}")  # waits for animations; saved with the other e2e pictures too
    THEME_SHOTS.mkdir(parents=True, exist_ok=True)
    workbench.page.screenshot(path=str(THEME_SHOTS / f"{theme}.png"))
    sidebar.screenshot(path=str(THEME_SHOTS / f"{theme}-side-bar.png"))
    card.get_by_role("button", name="Allow once").click()
    assert fake.next_answer("approval", seen["approval"]) == {"decision": "allow"}
    wait_idle(chat)
