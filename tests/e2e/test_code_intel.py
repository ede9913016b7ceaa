"""The editor's language features as tools, in a real VS Code with its built-in TypeScript support: the mock model
asks for a definition and the references of a symbol across two files, then renames it; the person reviews the
rename as one multi-file diff, edits one of the files, and accepts. The files on disk and what the model is told
are checked.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from codeserver import REPO, CodeServer, wait_for
from playwright.sync_api import expect
from test_real_flows import MockFactory, mock_model, send
from workbench import Workbench

pytestmark = pytest.mark.e2e

__all__ = ["mock_model"]  # the fixture, shared with test_real_flows

FIXTURE = REPO / "examples" / "ts-workspace"
CALL_LINE = "const total: number = totalArea([square, square]);"
DECLARATION = "export function totalArea(shapes: Shape[]): number {"


@pytest.fixture
def ts_workspace(code_server: CodeServer, workbench: Workbench) -> Iterator[Path]:
    target = code_server.workspace / "ts-workspace"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(FIXTURE, target)
    typescript_ready(workbench)
    yield target
    shutil.rmtree(target, ignore_errors=True)  # later tests in this editor see the demo workspace, not this copy


def typescript_ready(workbench: Workbench, timeout: float = 120, folder: str = "ts-workspace") -> None:
    """Until the TypeScript server has loaded the project: VS Code answers from a syntax-only server while it loads,
    which knows only the open file (a definition across files lands on the import). Go to Definition on the call
    in main.ts opens shapes.ts once the project is loaded; tried again until it does."""
    page = workbench.page
    page.keyboard.press("Escape")
    page.keyboard.press("Control+P")
    box = page.locator(".quick-input-widget input.input")
    box.fill(f"{folder}/src/main.ts")
    # The row of this folder's main.ts ("ts/src" is not part of "ts-workspace/src"): another test's copy may be there.
    rows = page.locator(".quick-input-widget .quick-input-list .monaco-list-row", has_text="main.ts")
    rows.filter(has_text=f"{folder}/src").first.click()
    deadline = time.monotonic() + timeout
    active = page.locator(".tabs-container .tab.active")
    while True:
        page.locator(".tabs-container .tab.active").click()
        page.locator(".monaco-editor .view-line", has_text="= totalArea(").get_by_text("totalArea").click()
        page.keyboard.press("F12")
        try:
            expect(active).to_contain_text("shapes.ts", timeout=3_000)
            break
        except AssertionError:
            if time.monotonic() > deadline:
                raise
    page.keyboard.press("Control+K")
    page.keyboard.press("W")  # close the editors again: the tests start from a clean editor area


def tool_results(request: dict[str, object]) -> str:
    """What the model was told by the last turn's tools (OpenAI's format: one message per result, after the
    assistant's message)."""
    messages = request["body"]["messages"]  # type: ignore[index]
    last_assistant = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return "\n".join(json.loads(json.dumps(m["content"])) for m in messages[last_assistant + 1 :])


def test_definition_and_references_across_two_files(
    mock_model: MockFactory, workbench: Workbench, ts_workspace: Path
) -> None:
    main = str(ts_workspace / "src" / "main.ts")
    at_call = {"file_path": main, "symbol": "totalArea", "line_text": CALL_LINE}
    model = mock_model(
        [
            {
                "text": "Let me look the function up.",
                "tool_uses": [
                    {"name": "LSP", "input": {"operation": "goToDefinition", **at_call}},
                    {"name": "LSP", "input": {"operation": "findReferences", **at_call}},
                ],
            },
            {"text": "Found it."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Where is totalArea defined and used?")
    expect(chat.locator(".msg-assistant").last).to_contain_text("Found it.", timeout=90_000)
    [_, second] = model.requests()
    told = tool_results(second)
    # The definition is in the other file; the references are in both (the declaration, the import, the call).
    assert f"Definition of totalArea (1 definition):\nts-workspace/src/shapes.ts:5: {DECLARATION}" in told, told
    assert "References to totalArea (3 references)" in told, told
    assert "ts-workspace/src/main.ts:1: import { totalArea } from './shapes';" in told, told
    assert f"ts-workspace/src/main.ts:4: {CALL_LINE}" in told, told
    workbench.shot("70-code-intel-references")


def test_a_rename_across_two_files_reviewed_with_one_file_edited(
    mock_model: MockFactory, workbench: Workbench, ts_workspace: Path
) -> None:
    page = workbench.page
    shapes, main = ts_workspace / "src" / "shapes.ts", ts_workspace / "src" / "main.ts"
    rename = {"file_path": str(shapes), "symbol": "totalArea", "line_text": DECLARATION, "new_name": "sumOfAreas"}
    model = mock_model(
        [
            {"text": "Renaming it.", "tool_uses": [{"name": "Rename", "input": rename}]},
            {"text": "Renamed."},
        ]
    )
    chat = workbench.open_chat()
    send(workbench, "Rename totalArea to sumOfAreas.")

    # One review for both files: each opens as a diff; nothing is written before Accept.
    review = chat.locator(".review-pending").last
    expect(review).to_contain_text("shapes.ts", timeout=90_000)
    expect(review).to_contain_text("main.ts")
    assert "totalArea" in main.read_text() and "totalArea" in shapes.read_text()
    tab = page.locator(".tabs-container .tab", has_text="main.ts ↔ toolgate proposal")
    tab.click()
    workbench.type_at_end_of(
        page.locator(".monaco-diff-editor .editor.modified .view-line", has_text="= sumOfAreas("),
        " // reviewed",
    )
    workbench.shot("71-code-intel-rename-review")
    review.get_by_role("button", name="Accept", exact=True).click()
    wait_for(lambda: "sumOfAreas" in shapes.read_text(), 30, "the sidecar to write the renamed files")
    assert shapes.read_text() == (FIXTURE / "src" / "shapes.ts").read_text().replace("totalArea", "sumOfAreas")
    renamed_call = CALL_LINE.replace("totalArea", "sumOfAreas")
    assert main.read_text() == (FIXTURE / "src" / "main.ts").read_text().replace("totalArea", "sumOfAreas").replace(
        renamed_call, f"{renamed_call} // reviewed"
    )

    expect(chat.locator(".msg-assistant").last).to_contain_text("Renamed.")
    [_, second] = model.requests()
    told = tool_results(second)
    assert "Renamed totalArea to sumOfAreas: 3 changes in 2 files." in told, told
    assert "// reviewed" in told, told  # the model hears what the person changed
