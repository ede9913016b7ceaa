"""The problems step after an edit, and the Problems tool, through the real runtime and tools, with a scripted editor
at the wire's edge: it answers `toolgate/editor/problems` the way the extension does, from a toy language server that
reports an error on every line containing `BAD` (and covers `.ts` files only)."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolgate.core.change_followers import CHANGE_FOLLOWER
from toolgate.core.editor_problems import EDITOR_PROBLEMS as EDITOR_PROBLEMS_SOURCE
from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sidecar.approvals import ClientUnavailable
from toolgate.sidecar.problems import EditorProblemsSource, ProblemsFollower, problems_dependencies
from toolgate.sidecar.protocol_problems import (
    EDITOR_PROBLEMS,
    EditorProblem,
    EditorProblemsParams,
    EditorProblemsResult,
    FileProblemsAnswer,
)
from toolgate.sidecar.wire_model import WireModel
from toolgate.testing import AllowingApprover, run1
from toolgate.tools import builtin_tools, editor_tools

WAIT_SECONDS = 1.5


def toy_problems(text: str) -> list[EditorProblem]:
    return [
        EditorProblem(line=i, character=line.index("BAD"), severity="error", message="BAD is not allowed", source="toy")
        for i, line in enumerate(text.splitlines())
        if "BAD" in line
    ]


class ScriptedEditor:
    """A ClientChannel that answers like the extension: for a file with a content hash, it 'settles' only when the
    file on disk has that content (the editor picked it up)."""

    def __init__(self) -> None:
        self.asked: list[EditorProblemsParams] = []
        self.gone = False
        self.silent = False
        self.unsettled = False
        self.unheard = False  # no language server has reported yet (a cold one, still starting)
        self.unloaded = False  # the buffer never took a content asked about (the file watcher did not report it)

    async def request(self, method: str, params: WireModel, result: type[Any]) -> Any:
        assert method == EDITOR_PROBLEMS and isinstance(params, EditorProblemsParams)
        self.asked.append(params)
        if self.gone:
            raise ClientUnavailable("the editor has disconnected")
        if self.silent:
            await anyio.sleep(math.inf)
        answers = []
        for wanted in params.files or []:
            path = Path(wanted.path)
            text = path.read_text(encoding="utf-8")
            digest = hashlib.sha256(text.encode()).hexdigest()
            covered = path.suffix == ".ts"
            loaded = not (self.unloaded and wanted.content_sha256 is not None)
            settled = covered and loaded and not self.unsettled and wanted.content_sha256 in (None, digest)
            problems = toy_problems(text) if covered else []
            heard = not self.unheard
            answers.append(
                FileProblemsAnswer(
                    path=str(path),
                    covered=covered,
                    settled=settled,
                    loaded=loaded,
                    heard_from_server=heard,
                    problems=problems,
                )
            )
        return EditorProblemsResult(files=answers, waited_seconds=WAIT_SECONDS)


@pytest.fixture
def editor() -> ScriptedEditor:
    return ScriptedEditor()


@pytest.fixture
async def rt(workspace: Path, editor: ScriptedEditor) -> AsyncIterator[Runtime]:
    options = RuntimeOptions(
        mode=PermissionMode.BYPASS,
        tools=[*builtin_tools(), *editor_tools()],
        dependencies=problems_dependencies(editor),
    )
    runtime = build_runtime(workspace, AllowingApprover(), options)
    yield runtime
    await runtime.aclose()


async def edit(rt: Runtime, path: Path, old: str, new: str) -> str:
    assert not (await run1(rt, "Read", file_path=str(path))).is_error
    result = await run1(rt, "Edit", file_path=str(path), old_string=old, new_string=new)
    assert not result.is_error, result.text()
    return result.text()


async def test_an_edit_that_introduces_a_problem_ends_with_it_and_moved_old_ones_are_not_listed(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\nconst b = BAD\n", encoding="utf-8")
    text = await edit(rt, path, "const a = 1\n", "// note\nconst a = 1\nlet c = BAD\n")
    body, _, note = text.partition("\n\nNew problems")
    assert body.startswith("Edited main.ts")
    assert note.splitlines()[1:] == ["main.ts:3:9 error (toy): BAD is not allowed"]
    before, after = editor.asked
    assert before.wait and not before.patient  # a baseline: a server still loading is not waited for long
    assert before.files is not None and before.files[0].content_sha256 is None
    written = hashlib.sha256(path.read_bytes()).hexdigest()
    assert after.wait and after.patient and after.files is not None and after.files[0].content_sha256 == written


async def test_an_edit_that_fixes_a_problem_adds_nothing(rt: Runtime, workspace: Path) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\nconst b = BAD\n", encoding="utf-8")
    text = await edit(rt, path, "BAD", "2")
    assert text == "Edited main.ts (line 2)."


async def test_a_file_no_language_server_covers_gets_nothing(rt: Runtime, workspace: Path) -> None:
    path = workspace / "notes.txt"
    path.write_text("fine\n", encoding="utf-8")
    assert "problem" not in (await edit(rt, path, "fine", "BAD")).lower()


async def test_a_language_server_that_did_not_settle_is_named_with_the_wait(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    editor.unsettled = True
    text = await edit(rt, path, "1", "2")
    assert text.endswith(
        "The language server had not finished checking main.ts within 1.5 s, so problems may be missing here; "
        "the Problems tool shows them later."
    )


async def test_a_language_server_not_heard_from_is_named_with_what_to_do(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    editor.unheard = True
    text = await edit(rt, path, "1", "2")
    assert text == (
        "Edited main.ts (line 1).\n\nThe language server had not reported on main.ts yet (it may still be starting), "
        "so no problems here does not mean none; run the Problems tool on it in a moment."
    )


async def test_a_change_the_editor_never_loaded_is_named_as_such_without_the_old_contents_problems(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    editor.unloaded = True  # the language server may have settled, but on the buffer's old text
    text = await edit(rt, path, "1", "BAD")
    assert text == (
        "Edited main.ts (line 1).\n\nThe editor had not yet loaded the change to main.ts, so problems may be missing "
        "here; the Problems tool shows them later."
    )


async def test_a_write_that_creates_a_file_reports_all_its_problems(rt: Runtime, workspace: Path) -> None:
    result = await run1(rt, "Write", file_path=str(workspace / "new.ts"), content="ok\nBAD\n")
    assert result.text().endswith("new.ts:2:1 error (toy): BAD is not allowed")


async def test_an_apply_patch_reports_per_file(rt: Runtime, workspace: Path) -> None:
    (workspace / "a.ts").write_text("one\n", encoding="utf-8")
    (workspace / "b.ts").write_text("two\n", encoding="utf-8")
    for name in ("a.ts", "b.ts"):
        await run1(rt, "Read", file_path=str(workspace / name))
    patch = (
        "*** Begin Patch\n*** Update File: a.ts\n-one\n+BAD one\n*** Update File: b.ts\n-two\n+two BAD\n*** End Patch"
    )
    result = await run1(rt, "ApplyPatch", patch=patch)
    assert result.text().splitlines()[-2:] == [
        "a.ts:1:1 error (toy): BAD is not allowed",
        "b.ts:1:5 error (toy): BAD is not allowed",
    ]


async def test_an_apply_patch_that_moves_a_file_compares_it_with_its_old_path(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    (workspace / "old.ts").write_text("one BAD\ntwo\n", encoding="utf-8")
    await run1(rt, "Read", file_path=str(workspace / "old.ts"))
    patch = "*** Begin Patch\n*** Update File: old.ts\n*** Move to: new.ts\n one BAD\n-two\n+BAD two\n*** End Patch"
    result = await run1(rt, "ApplyPatch", patch=patch)
    assert not result.is_error, result.text()
    # The problem the file had at its old path came along; only the one the patch added is new.
    assert result.text().splitlines()[-2:] == [
        "New problems the editor reports after this change:",
        "new.ts:2:1 error (toy): BAD is not allowed",
    ]
    before, after = editor.asked
    assert before.files is not None and [f.path for f in before.files] == [str(workspace / "old.ts")]
    assert after.files is not None and [f.path for f in after.files] == [str(workspace / "new.ts")]


async def test_a_notebook_edit_asks_nothing(rt: Runtime, workspace: Path, editor: ScriptedEditor) -> None:
    path = workspace / "n.ipynb"
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "source": ["x = 1"], "outputs": []}
    cell["execution_count"] = None
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook), encoding="utf-8")
    await run1(rt, "Read", file_path=str(path))
    result = await run1(rt, "NotebookEdit", notebook_path=str(path), cell_id="c1", new_source="BAD")
    assert not result.is_error, result.text()
    assert editor.asked == []


async def test_an_edit_refused_by_its_state_check_asks_the_editor_nothing(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    await run1(rt, "Read", file_path=str(path))
    result = await run1(rt, "Edit", file_path=str(path), old_string="missing", new_string="BAD")
    assert result.is_error
    assert editor.asked == []  # refused before the permission step: nothing to follow


async def test_an_editor_that_is_gone_leaves_the_result_as_it_was(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    editor.gone = True
    assert await edit(rt, path, "1", "BAD") == "Edited main.ts (line 1)."


async def test_an_editor_that_never_answers_costs_a_bounded_wait(workspace: Path, editor: ScriptedEditor) -> None:
    editor.silent = True
    source = EditorProblemsSource(editor, limit_seconds=0.2)
    follower = ProblemsFollower(source)
    options = RuntimeOptions(
        mode=PermissionMode.BYPASS, dependencies={EDITOR_PROBLEMS_SOURCE: source, CHANGE_FOLLOWER: follower}
    )
    runtime = build_runtime(workspace, AllowingApprover(), options)
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    try:
        with anyio.fail_after(10):
            assert await edit(runtime, path, "1", "BAD") == "Edited main.ts (line 1)."
    finally:
        await runtime.aclose()
    assert len(editor.asked) == 1  # the baseline went unanswered: the call was not followed any further


async def test_an_interrupt_while_the_editor_checks_says_the_change_was_made(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    await run1(rt, "Read", file_path=str(path))
    answer_before = editor.request

    async def hang_after_the_edit(method: str, params: WireModel, result: type[Any]) -> Any:
        if isinstance(params, EditorProblemsParams) and params.patient:
            token.cancel()  # the person interrupts while the language server is being waited for
            await anyio.sleep(math.inf)
        return await answer_before(method, params, result)

    editor.request = hang_after_the_edit  # type: ignore[method-assign]
    token = CancelToken()
    use = ToolUse(id="toolu_1", name="Edit", input={"file_path": str(path), "old_string": "1", "new_string": "2"})
    with anyio.fail_after(10):
        [result] = await rt.orchestrator.run_turn([use], token)
    assert path.read_text() == "const a = 2\n"
    assert result.text() == (
        "Edited main.ts (line 1).\n\n"
        "(The turn was interrupted while the editor checked this change; the change itself was made.)"
    )


async def test_headless_sessions_have_no_problems_tool_and_ask_no_editor(runtime: Runtime, workspace: Path) -> None:
    assert "Problems" not in runtime.registry.name_set
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    runtime.session.mode = PermissionMode.BYPASS
    assert await edit(runtime, path, "1", "BAD") == "Edited main.ts (line 1)."


# --- the Problems tool ------------------------------------------------------------------------------------------------
async def test_problems_of_a_file(rt: Runtime, workspace: Path, editor: ScriptedEditor) -> None:
    (workspace / "main.ts").write_text("BAD\nok\nok BAD\n", encoding="utf-8")
    result = await run1(rt, "Problems", path="main.ts")
    assert not result.is_error
    assert result.text().splitlines() == [
        "2 problems in main.ts:",
        "main.ts:1:1 error (toy): BAD is not allowed",
        "main.ts:3:4 error (toy): BAD is not allowed",
    ]
    assert editor.asked[-1].wait and editor.asked[-1].patient


async def test_problems_of_a_file_no_language_server_has_reported_on_are_not_called_none(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    (workspace / "main.ts").write_text("ok\n", encoding="utf-8")
    editor.unheard = True
    result = await run1(rt, "Problems", path="main.ts")
    assert result.text() == (
        "No errors or warnings listed in main.ts.\n"
        "No language server has reported on main.ts yet (it may still be starting), so no problems listed for it "
        "does not mean none; ask again in a moment."
    )


async def test_problems_of_the_workspace_name_the_open_files_no_language_server_has_reported_on(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    (workspace / "main.ts").write_text("BAD\n", encoding="utf-8")
    quiet = [
        FileProblemsAnswer(path=str(workspace / "main.ts"), covered=True, settled=True, problems=toy_problems("BAD"))
    ]
    quiet += [
        FileProblemsAnswer(
            path=str(workspace / f"m{i:02}.ts"), covered=True, settled=True, heard_from_server=False, problems=[]
        )
        for i in range(12)
    ]

    async def open_files_of_a_cold_language(method: str, params: WireModel, result: type[Any]) -> Any:
        return EditorProblemsResult(files=quiet, waited_seconds=0)

    editor.request = open_files_of_a_cold_language  # type: ignore[method-assign]
    assert (await run1(rt, "Problems")).text().splitlines() == [
        "1 problem in the workspace:",
        "main.ts:1:1 error (toy): BAD is not allowed",
        "No language server has reported on m00.ts, m01.ts, m02.ts, m03.ts, m04.ts, m05.ts, m06.ts, m07.ts, m08.ts, "
        "m09.ts and 2 more yet (it may still be starting), so no problems listed for them does not mean none; ask "
        "again in a moment.",
    ]


async def test_problems_of_a_file_no_language_server_covers(rt: Runtime, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("BAD\n", encoding="utf-8")
    result = await run1(rt, "Problems", path="notes.txt")
    assert result.text() == (
        "No language server in the editor reports problems for notes.txt, so there is nothing to list."
    )


async def test_problems_of_the_workspace_are_capped_and_the_cap_announced(
    rt: Runtime, workspace: Path, editor: ScriptedEditor
) -> None:
    text = "BAD\n" * 130
    (workspace / "big.ts").write_text(text, encoding="utf-8")
    problems = toy_problems(text)

    async def every_file(method: str, params: WireModel, result: type[Any]) -> Any:
        assert isinstance(params, EditorProblemsParams) and params.files is None and not params.wait
        answer = FileProblemsAnswer(path=str(workspace / "big.ts"), covered=True, settled=True, problems=problems)
        elsewhere = FileProblemsAnswer(path="/elsewhere/x.ts", covered=True, settled=True, problems=problems[:1])
        return EditorProblemsResult(files=[answer, elsewhere], waited_seconds=WAIT_SECONDS)

    editor.request = every_file  # type: ignore[method-assign]
    lines = (await run1(rt, "Problems")).text().splitlines()
    assert lines[0] == (
        "130 problems in the workspace (showing 100 of 130; give a file or directory to narrow the list):"
    )
    assert len(lines) == 101
    assert lines[-1] == "big.ts:100:1 error (toy): BAD is not allowed"


async def test_problems_when_the_editor_is_gone_is_a_clear_error(rt: Runtime, editor: ScriptedEditor) -> None:
    editor.gone = True
    result = await run1(rt, "Problems")
    assert result.is_error
    assert "The editor could not list the problems (the editor has disconnected)" in result.text()


async def test_problems_of_a_missing_path_says_so(rt: Runtime) -> None:
    result = await run1(rt, "Problems", path="nowhere.ts")
    assert result.is_error and "nowhere.ts does not exist" in result.text()


async def test_problems_without_an_editor_says_what_to_do_instead(workspace: Path) -> None:
    runtime = build_runtime(workspace, AllowingApprover(), RuntimeOptions(tools=editor_tools()))
    try:
        result = await run1(runtime, "Problems")
    finally:
        await runtime.aclose()
    assert result.is_error and "this session has none" in result.text()


def test_every_tool_of_the_edit_family_is_followed() -> None:
    # Named twice (the permission modules load after this one): a writer added to one list and not the other would
    # write without telling the model what it broke (Rename was missed once).
    from toolgate.permissions.rules import EDIT_FAMILY
    from toolgate.sidecar.problems import FOLLOWED_TOOLS

    assert FOLLOWED_TOOLS == EDIT_FAMILY
