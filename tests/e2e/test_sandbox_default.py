"""The sandbox in the editor, by default (issue 27): the real sidecar runs the model's commands sandboxed without any
setting, the chat header says so, and while a command runs in the writable sandbox, every stand-in the Explorer shows
for an absent protected name (`.envrc`, `AGENTS.md`, …) carries toolgate's mark and says whose it is.

Screenshot: test-results/e2e/43-sandbox-stand-ins.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codeserver import CodeServer, wait_for
from playwright.sync_api import Locator, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from test_real_flows import MockFactory, mock_model, send  # noqa: F401 - mock_model is a fixture
from workbench import Workbench

pytestmark = pytest.mark.e2e

MARK = "◌"  # extension/src/standIns.ts STAND_IN_MARK.badge
# Written where the classifier cannot see it, so the ladder allows it on the sandbox's account (autoAllow), and
# kept running so its sandbox (and the stand-ins it mounts on) stays while the Explorer is looked at.
# The command outlives the checks below by a margin (on a loaded machine they took most of a minute): its stand-ins
# stand only while it runs.
COMMAND = "python3 -c \"open('made-in-sandbox.txt', 'w').write('x')\" && sleep 120"


def empty_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink() and not any(path.iterdir())


def marked(row: Locator) -> bool:
    """Whether the Explorer draws toolgate's badge on `row` (a decoration's badge is a pseudo-element's content)."""
    found: bool = row.evaluate(
        """(row, mark) => [row, ...row.querySelectorAll('*')].some((element) =>
            getComputedStyle(element, '::after').content.includes(mark))""",
        MARK,
    )
    return found


def test_commands_run_sandboxed_by_default_and_every_stand_in_is_marked(
    mock_model: MockFactory,  # noqa: F811 - the fixture imported above
    workbench: Workbench,
    code_server: CodeServer,
) -> None:
    workspace = code_server.workspace
    # An earlier test's sandbox may still hold its stand-ins for a few seconds. The person's entries are the rest;
    # an empty directory there now may be either, and is not judged below.
    wait_for(lambda: not (workspace / ".envrc").exists(), 60, "an earlier sandbox's stand-ins to go")
    unknown = {entry.name for entry in workspace.iterdir() if empty_dir(entry)}
    before = {entry.name for entry in workspace.iterdir()} - unknown
    mock_model(
        [
            {
                "text": "Writing a file in the background.",
                "tool_uses": [{"name": "Bash", "input": {"command": COMMAND, "run_in_background": True}}],
            },
            {"text": "Started."},
        ],
        auto_allow=True,
    )
    chat = workbench.open_chat()
    state = chat.locator(".sandbox-state")
    expect(state).to_have_attribute("data-state", "on")
    expect(state).to_have_text("sandboxed, auto-allow")
    expect(state).to_have_attribute("title", re.compile("Bash commands run sandboxed"))
    send(workbench, "Write a file in the background.")
    expect(chat.locator(".msg-assistant").last).to_contain_text("Started.")
    expect(chat.locator(".approval-pending")).to_have_count(0)  # allowed on the sandbox's account: not asked
    wait_for(lambda: (workspace / "made-in-sandbox.txt").exists(), 30, "the sandboxed command to write its file")
    envrc = workspace / ".envrc"
    assert envrc.is_dir(), "the absent .envrc has its stand-in while the command runs"
    stand_ins = {entry.name for entry in workspace.iterdir() if entry.name not in before and empty_dir(entry)}
    assert {".envrc", "AGENTS.md", ".mcp.json"} <= stand_ins, stand_ins

    workbench.activity("Explorer").click()
    # The Explorer learns of new directories from its file watcher, which may lag: refresh as a person would.
    workbench.page.locator('.explorer-viewlet [aria-label^="Refresh Explorer"]').first.click()
    tree = workbench.page.locator(".explorer-folders-view .monaco-list").first
    tree.focus()
    workbench.page.keyboard.press("Home")  # the top of the tree (an earlier test may have revealed a file below)
    rows = workbench.page.locator(".explorer-folders-view .monaco-list-row")
    envrc_row = rows.filter(has_text=re.compile(r"^\s*\.envrc\s*$")).first
    expect(envrc_row).to_be_visible(timeout=30_000)
    wait_for(lambda: marked(envrc_row), 30, "the Explorer to mark the .envrc stand-in")
    hover = workbench.page.locator(".monaco-hover, .workbench-hover").filter(has_text="toolgate's sandbox")

    def tooltip_shown() -> bool:
        # The workbench shows a hover only while the pointer rests on the row (a toast or a re-render can take it
        # away): point at it again until the tooltip is there.
        workbench.page.mouse.move(900, 450)
        try:
            # The Explorer reveals the active editor's file and scrolls .envrc out of its virtual list: to the top.
            tree.focus()
            workbench.page.keyboard.press("Home")
            envrc_row.hover(timeout=5_000)
            expect(hover.first).to_be_visible(timeout=3_000)
        except (AssertionError, PlaywrightTimeoutError):
            return False
        return True

    wait_for(tooltip_shown, 45, "the stand-in's tooltip")
    workbench.shot("43-sandbox-stand-ins")
    workbench.page.mouse.move(900, 450)
    checked = 0
    for index in range(rows.count()):
        row = rows.nth(index)
        name = row.inner_text().strip()
        if name in stand_ins - unknown:
            assert marked(row), f"the stand-in {name} is shown without toolgate's mark"
            checked += 1
        elif name in before:
            assert not marked(row), f"the person's {name} is marked as a stand-in"
    assert checked >= 3, checked

    # The stand-ins go once the command ended and its sandbox went idle; the file it wrote stays.
    wait_for(lambda: not envrc.exists(), 240, "the stand-ins to go after the command")
    assert (workspace / "made-in-sandbox.txt").read_text() == "x"
    (workspace / "made-in-sandbox.txt").unlink()
