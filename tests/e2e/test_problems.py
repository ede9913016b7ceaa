"""Problems after an edit, in a real VS Code with its built-in TypeScript language features: the mock model edits a
.ts file of examples/ts-workspace so that it no longer type-checks, and the tool_result it reads next ends with the
type error; it edits it back, and that result has no problem in it. With the file watcher leaving the file out, the
extension has VS Code reload the buffer that missed the change, and the error is still found. The composer's
`@problems` mention reaches the model through the same request, as the Problems tool lists the problems."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from codeserver import REPO, CodeServer, wait_for
from playwright.sync_api import expect
from test_code_intel import typescript_ready
from test_real_flows import MockFactory, MockModel, mock_model, send
from workbench import Workbench

pytestmark = pytest.mark.e2e
__all__ = ["mock_model"]  # the fixture, used by name

TS_WORKSPACE = REPO / "examples" / "ts-workspace"
# Edits under ts/ run without a review (the review is not what this test is about); the TypeScript server loads the
# project on the first edit, which on a busy machine takes longer than the default wait.
TOOLGATE_SETTINGS = {"sandbox": {"autoAllow": False}, "permissions": {"allow": ["Edit(ts/**)"]}}
WAIT_SECONDS = 15
TYPE_ERROR = "ts/src/main.ts:4:7 error (ts 2322): Type 'number' is not assignable to type 'string'."


@pytest.fixture
def ts_project(code_server: CodeServer) -> Iterator[Path]:
    """examples/ts-workspace copied to ts/ in the editor's workspace, with the settings above."""
    target = code_server.workspace / "ts"
    shutil.copytree(TS_WORKSPACE, target)
    settings = code_server.workspace / ".toolgate" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps(TOOLGATE_SETTINGS))
    try:
        yield target
    finally:
        code_server.write_workspace_settings(None)
        settings.unlink(missing_ok=True)
        shutil.rmtree(target, ignore_errors=True)


def tool_results(request: dict[str, Any]) -> list[str]:
    """The tool results in a recorded OpenAI-style request, in order."""
    return [str(m.get("content")) for m in request["body"]["messages"] if m.get("role") == "tool"]


def edit_steps(path: Path, swaps: list[tuple[str, str]], closing: str) -> list[dict[str, Any]]:
    """The mock model's turn: Read the file, one Edit per swap, then the `closing` text (what the test waits for: a
    text of its own, not one an earlier test's chat shows)."""
    edits = [
        {
            "text": "Changing the type.",
            "tool_uses": [{"name": "Edit", "input": {"file_path": str(path), "old_string": old, "new_string": new}}],
        }
        for old, new in swaps
    ]
    read = {"text": "Reading it.", "tool_uses": [{"name": "Read", "input": {"file_path": str(path)}}]}
    return [read, *edits, {"text": closing}]


def run_turn(
    code_server: CodeServer, workbench: Workbench, steps: list[dict[str, Any]], settings: dict[str, Any]
) -> list[dict[str, Any]]:
    """One chat turn the mock model plays from `steps`, with the workspace `settings` added; its recorded requests."""
    model = MockModel(Path(tempfile.mkdtemp(prefix="mock-model-", dir=code_server.root)), steps)
    try:
        code_server.write_workspace_settings(
            {
                "toolgate.provider": "openai",
                "toolgate.baseUrl": f"{model.url}/v1",
                "toolgate.problems.waitSeconds": WAIT_SECONDS,
                **settings,
            }
        )
        # The person's project is loaded before the agent edits it (a cold TypeScript server on a loaded machine took
        # longer than the wait allowed, and the first Edit then said so instead of naming the error).
        typescript_ready(workbench, folder="ts")
        chat = workbench.open_chat()
        expect(chat.locator(".provider-status")).to_contain_text(model.url)
        chat.get_by_role("button", name="New").click()
        send(workbench, "Try a string total, then put it back.")
        # Each edit may wait up to WAIT_SECONDS for the TypeScript server (the first one loads the project).
        closing = steps[-1]["text"]
        expect(chat.locator(".msg-assistant").last).to_contain_text(closing, timeout=4 * WAIT_SECONDS * 1000)
        requests = model.requests()
    finally:
        model.stop()
    assert len(requests) == len(steps)
    return requests


def test_an_edit_that_breaks_the_types_gets_the_error_and_one_that_fixes_them_gets_none(
    ts_project: Path, workbench: Workbench, code_server: CodeServer
) -> None:
    main = ts_project / "src" / "main.ts"
    swap = [("const total: number", "const total: string"), ("const total: string", "const total: number")]
    requests = run_turn(code_server, workbench, edit_steps(main, swap, "Back as it was."), {})
    workbench.shot("60-problems-after-edits")
    broke = tool_results(requests[2])[-1]
    fixed = tool_results(requests[3])[-1]
    assert broke.startswith("Edited ts/src/main.ts"), broke
    assert broke.endswith(f"New problems the editor reports after this change:\n{TYPE_ERROR}"), broke
    assert fixed.startswith("Edited ts/src/main.ts") and "problem" not in fixed.lower(), fixed
    assert main.read_text() == (TS_WORKSPACE / "src" / "main.ts").read_text()


def test_a_change_the_file_watcher_does_not_report_is_reloaded_and_checked(
    ts_project: Path, workbench: Workbench, code_server: CodeServer
) -> None:
    # The editor's file watcher leaves ts/src out: the buffer of main.ts does not take the Edit's content by itself.
    main = ts_project / "src" / "main.ts"
    unwatched = {"files.watcherExclude": {"**/ts/src/**": True}}
    swap = [("const total: number", "const total: string")]
    requests = run_turn(code_server, workbench, edit_steps(main, swap, "A string total it is."), unwatched)
    broke = tool_results(requests[2])[-1]
    assert broke.startswith("Edited ts/src/main.ts"), broke
    assert broke.endswith(f"New problems the editor reports after this change:\n{TYPE_ERROR}"), broke


def test_a_problems_mention_reaches_the_model_as_the_problems_tool_lists_them(
    ts_project: Path, mock_model: MockFactory, workbench: Workbench
) -> None:
    main = ts_project / "src" / "main.ts"
    main.write_text(main.read_text().replace("const total: number", "const total: string"))
    typescript_ready(workbench, folder="ts")
    model = mock_model([{"text": "I see the type error."}])
    # TypeScript reports on the files shown in tabs: main.ts is shown again, until its error is drawn.
    page = workbench.page
    page.keyboard.press("Control+P")
    page.locator(".quick-input-widget input.input").fill("ts/src/main.ts")
    rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row", has_text="main.ts")
    rows.filter(has_text="ts/src").first.click()
    expect(page.locator(".monaco-editor .squiggly-error").first).to_be_visible(timeout=WAIT_SECONDS * 4000)

    chat = workbench.open_chat()
    composer = chat.locator(".composer-input")
    composer.click()
    composer.press_sequentially("Fix @prob")
    option = chat.get_by_role("listbox", name="Suggestions").get_by_role("option").first
    expect(option).to_contain_text(re.compile(r"problems\s*\d+ in the workspace, [1-9]\d* errors"))
    composer.press("Enter")
    expect(chat.locator(".composer-chips .chip", has_text=re.compile(r"^Problems \(\d+\)"))).to_be_visible()
    workbench.shot("61-problems-mention")
    composer.press("Enter")
    expect(chat.locator(".msg-assistant").last).to_contain_text("I see the type error.")
    wait_for(lambda: len(model.requests()) == 1, 30, "the request to reach the mock model")
    prompt = json.dumps(model.requests()[0]["body"]["messages"][-1])
    # The sidecar asked the editor and listed them as Problems does (the mention carried no problem).
    assert json.dumps("The person attached the editor's problems:\n")[1:-1] in prompt, prompt
    assert json.dumps(TYPE_ERROR)[1:-1] in prompt, prompt
    page.locator(".tabs-container .tab.active").click()
    page.keyboard.press("Control+K")
    page.keyboard.press("W")  # the editors closed again: the next test starts from a clean editor area
