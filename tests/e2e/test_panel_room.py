"""Room for the conversation, in a real VS Code at 1280×720 with the 300 px side bar: with a todo list done, an MCP
server approved and a command waiting for its approval, the transcript keeps at least half of the chat view (the
finished list is read from its card, the approved server's card left with the next message, the header is one
line). Deny… opens its feedback box with its button inside the visible transcript, and "Jump to latest" sits under
the transcript, never over it. Results read as a person reads them: a Read's lines and a search's counts.
The real sidecar, the mock model and the SDK-written edge MCP server; nothing faked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from codeserver import REPO, CodeServer
from playwright.sync_api import Locator, expect
from test_mcp import workspace_server  # noqa: F401  (a fixture)
from test_panel import THEMES
from test_real_flows import MockFactory, mock_model, send  # noqa: F401  (mock_model is a fixture)
from workbench import Workbench

pytestmark = pytest.mark.e2e

ROOM_SHOTS = REPO / "test-results" / "panel-room"
DONE = [{"id": str(n), "content": f"Step {n}", "status": "completed"} for n in range(1, 5)]


@pytest.fixture
def small_window(workbench: Workbench) -> Iterator[None]:
    """1280×720, the size of many a laptop's editor window; the default size again after."""
    page = workbench.page
    before = page.viewport_size
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        yield
    finally:
        if before:
            page.set_viewport_size(before)


def box(element: Locator) -> dict[str, float]:
    """The element's box, the transcript's and the chat view's, in the webview's coordinates."""
    found: dict[str, float] = element.evaluate(
        """(element) => {
          const own = element.getBoundingClientRect();
          const transcript = document.querySelector('.transcript').getBoundingClientRect();
          return { top: own.top, bottom: own.bottom, height: own.height, transcriptTop: transcript.top,
                   transcriptBottom: transcript.bottom, transcriptHeight: transcript.height,
                   viewHeight: window.innerHeight };
        }"""
    )
    return found


def inside_transcript(element: Locator) -> bool:
    found = box(element)
    return found["top"] >= found["transcriptTop"] - 1 and found["bottom"] <= found["transcriptBottom"] + 1


def test_the_conversation_keeps_half_the_view_and_deny_feedback_opens_in_sight(
    mock_model: MockFactory,  # noqa: F811
    workspace_server: Path,  # noqa: F811
    small_window: None,
    workbench: Workbench,
    code_server: CodeServer,
) -> None:
    greet = code_server.workspace / "src" / "greet.py"
    lines = len(greet.read_text().splitlines())
    model = mock_model(
        [
            {"text": "The plan, all done.", "tool_uses": [{"name": "TodoWrite", "input": {"todos": DONE}}]},
            {"text": "All four steps are done."},
            {"text": "Reading it first.", "tool_uses": [{"name": "Read", "input": {"file_path": str(greet)}}]},
            {
                "text": "And searching.",
                "tool_uses": [{"name": "Grep", "input": {"pattern": "def ", "path": "src", "output_mode": "content"}}],
            },
            {"text": "Now a command.", "tool_uses": [{"name": "Bash", "input": {"command": "touch room.txt"}}]},
            {"text": "Understood, I will not."},
        ]
    )
    chat = workbench.open_chat()
    sidebar = workbench.page.locator(".part.sidebar")
    width = sidebar.evaluate("(element) => element.getBoundingClientRect().width")
    assert abs(width - 300) <= 2, f"the side bar is {width} px wide"

    # The header is one line, in words.
    status = chat.locator(".status-row")
    expect(status).to_contain_text("Ready")
    expect(status.locator(".sandbox-state")).to_have_text("sandboxed")
    one_line = "(row) => row.getBoundingClientRect().height < 2 * parseFloat(getComputedStyle(row).lineHeight)"
    assert status.evaluate(one_line), status.evaluate("(row) => row.getBoundingClientRect().height")

    # The server is approved from its card; the card says so until the next message, then leaves.
    chat.locator(".mcp-card-pending").get_by_role("button", name="Approve").click()
    expect(chat.locator(".mcp-card-approved")).to_be_visible()
    send(workbench, "Make a plan.")
    expect(chat.locator(".mcp-card-approved")).to_have_count(0)
    todo_card = chat.locator("details.tool[data-tool='TodoWrite']").last
    expect(todo_card.locator(".tool-summary")).to_have_text("4 of 4 done")
    expect(chat.locator(".msg-assistant").last).to_contain_text("All four steps are done.")
    expect(chat.locator(".todos")).to_be_hidden()  # finished: not pinned, read from its card
    expect(chat.locator("button.send")).to_be_visible()  # the turn has ended: the next message is taken

    send(workbench, "Now run it.")
    card = chat.locator(".approval-pending").last
    expect(card).to_contain_text("touch room.txt")
    expect(card).to_be_focused()  # the card took the keyboard, and the view brought it into sight
    assert inside_transcript(card), box(card)
    workbench.shot("90-room-pending-at-720")

    # The conversation keeps at least half of the chat view.
    measured = box(card)
    assert measured["transcriptHeight"] >= measured["viewHeight"] / 2, measured

    # A Read says what it read and opens to the file's lines, without the model's line-number prefixes.
    read = chat.locator("details.tool[data-tool='Read']").last
    expect(read.locator(":scope > summary")).to_contain_text(f"Read{lines} lines of src/greet.py")
    read.locator(":scope > summary").click()
    first = read.locator(".code-line").first
    expect(first.locator(".line-number")).to_have_text("1")
    assert "\t" not in (read.locator(".code-lines").text_content() or "")
    grep = chat.locator("details.tool[data-tool='Grep']").last
    expect(grep.locator(".tool-stat")).to_have_text(re.compile(r"^\d+ match(es)? in \d+ files?$"))
    expect(grep.locator(".search-path").first).to_have_text("src/greet.py")

    # Deny… opens its box with its button inside the visible transcript.
    card.get_by_role("button", name="Deny…").click()
    feedback = card.get_by_label("Feedback for the agent")
    expect(feedback).to_be_focused()
    deny = card.get_by_role("button", name="Deny", exact=True)
    assert inside_transcript(feedback), box(feedback)
    assert inside_transcript(deny), box(deny)
    workbench.shot("91-room-deny-feedback-in-view")

    # Scrolled up while typing: "Jump to latest" shows under the transcript, not over the box.
    feedback.fill("not in this workspace")
    transcript = chat.locator(".transcript")
    assert transcript.evaluate("(element) => element.scrollHeight > element.clientHeight"), "not a scrolling case"
    transcript.hover()
    workbench.page.mouse.wheel(0, -5000)
    jump = chat.get_by_role("button", name="Jump to latest ↓")
    expect(jump).to_be_visible()
    assert box(jump)["top"] >= box(jump)["transcriptBottom"] - 1, box(jump)
    jump.click()
    feedback.press("Enter")
    answered = chat.locator("details.tool-error[data-tool='Bash'] .tool-answer.approval-denied")
    expect(answered).to_contain_text("Denied, with feedback: not in this workspace")
    expect(chat.locator(".card.approval")).to_have_count(0)  # the answer is part of the tool's card
    expect(chat.locator(".msg-assistant").last).to_contain_text("Understood, I will not.")
    workbench.shot("92-room-denied")

    # The same conversation in the four kinds of theme, the Read card open: pictures for a person to look at.
    read.locator(":scope > summary").scroll_into_view_if_needed()
    ROOM_SHOTS.mkdir(parents=True, exist_ok=True)
    provider = {"toolgate.provider": "openai", "toolgate.baseUrl": f"{model.url}/v1"}
    for theme, (name, body_class) in THEMES.items():
        code_server.write_workspace_settings({**provider, "workbench.colorTheme": name})
        expect(chat.locator(f"body.{body_class}")).to_have_count(1)
        workbench.shot(f"93-room-{theme}")
        sidebar.screenshot(path=str(ROOM_SHOTS / f"{theme}-side-bar.png"))
    code_server.write_workspace_settings(provider)
