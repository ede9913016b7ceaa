"""Review mode "after": an edit that asks only because it changes files inside the working directories applies at
once, without holding the model for a review (the changes bar reviews it after); an edit that asks for any other
reason (a safety check) is still reviewed first."""

from __future__ import annotations

from pathlib import Path

from toolgate.core.messages import ToolUse
from toolgate.core.permission import PermissionMode, ReviewAnswer, ReviewNote
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover


async def _run(rt: Runtime, name: str, **tool_input: str) -> tuple[bool, str]:
    [result] = await rt.orchestrator.run_turn([ToolUse(id=f"{name}-{len(tool_input)}", name=name, input=tool_input)])
    return result.is_error, result.text()


async def test_an_edit_applies_at_once_and_a_safety_ask_is_still_reviewed(workspace: Path) -> None:
    approver = AllowingApprover()
    rt = build_runtime(workspace, approver, RuntimeOptions(mode=PermissionMode.DEFAULT, read_settings=False))
    rt.session.review_edits = "after"
    target = workspace / "notes.txt"
    failed, text = await _run(rt, "Write", file_path=str(target), content="written at once\n")
    assert not failed, text
    assert target.read_text() == "written at once\n" and approver.reviews == []

    (workspace / ".git").mkdir()
    hook = workspace / ".git" / "config"
    await _run(rt, "Write", file_path=str(hook), content="[core]\n")
    assert len(approver.reviews) == 1 and approver.reviews[0].files[0].path.endswith("config")
    await rt.aclose()


async def test_before_stays_the_default_and_asks_first(workspace: Path) -> None:
    approver = AllowingApprover()
    rt = build_runtime(workspace, approver, RuntimeOptions(mode=PermissionMode.DEFAULT, read_settings=False))
    assert rt.session.review_edits == "when_asking"
    await _run(rt, "Write", file_path=str(workspace / "notes.txt"), content="x\n")
    assert len(approver.reviews) == 1
    await rt.aclose()


async def test_a_note_on_a_line_reaches_the_model_with_the_decision(workspace: Path) -> None:
    approver = AllowingApprover()
    rt = build_runtime(workspace, approver, RuntimeOptions(mode=PermissionMode.DEFAULT, read_settings=False))
    target = workspace / "notes.txt"
    note = ReviewNote(path=str(target), line=1, text="call it a draft")
    approver.reviewer = lambda _request: ReviewAnswer(decision="accept", notes=[note])
    failed, text = await _run(rt, "Write", file_path=str(target), content="x\n")
    assert not failed and text.endswith(
        "The user applied your change, with these notes:\n- notes.txt, line 1: call it a draft"
    )
    approver.reviewer = lambda _request: ReviewAnswer(decision="reject", notes=[note])
    failed, text = await _run(rt, "Write", file_path=str(workspace / "other.txt"), content="y\n")
    assert failed and "rejected your change because of these notes:\n- notes.txt, line 1: call it a draft" in text
    await rt.aclose()
