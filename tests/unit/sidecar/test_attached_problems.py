"""The composer's `@problems` mention, answered the way the Problems tool answers (one request to the editor, its
checks, order, cap and lines), through the real runtime and tools, with test_problems_step's scripted editor at the
wire's edge; and the Problems tool's own listing of a tree, which leaves out what Read may not show."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.unit.sidecar.test_problems_step import WAIT_SECONDS, ScriptedEditor, toy_problems

from toolgate.core.permission import PermissionMode
from toolgate.permissions.rules import Behavior
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sidecar.attached_problems import attached_problems_text
from toolgate.sidecar.problems import problems_dependencies
from toolgate.sidecar.protocol_problems import (
    EditorProblem,
    EditorProblemsParams,
    EditorProblemsResult,
    FileProblemsAnswer,
)
from toolgate.sidecar.wire_model import WireModel
from toolgate.testing import AllowingApprover, run1
from toolgate.tools import builtin_tools, editor_tools

HEAD = "The person attached the editor's problems"

RuntimeWith = Callable[[dict[Behavior, Sequence[str]]], Runtime]


@pytest.fixture
def editor() -> ScriptedEditor:
    return ScriptedEditor()


@pytest.fixture
async def runtime_with(workspace: Path, editor: ScriptedEditor) -> AsyncIterator[RuntimeWith]:
    """An editor session in the default mode, with the given command-line rules."""
    built: list[Runtime] = []

    def build(rules: dict[Behavior, Sequence[str]]) -> Runtime:
        options = RuntimeOptions(
            mode=PermissionMode.DEFAULT,
            rules=rules,
            read_settings=False,
            tools=[*builtin_tools(), *editor_tools()],
            dependencies=problems_dependencies(editor),
        )
        built.append(build_runtime(workspace, AllowingApprover(), options))
        return built[-1]

    yield build
    for runtime in built:
        await runtime.aclose()


def editor_knows(editor: ScriptedEditor, files: dict[Path, list[EditorProblem]]) -> None:
    """The editor answers a whole-workspace question with `files` (a file question as before)."""
    answer_files = editor.request

    async def request(method: str, params: WireModel, result: type[Any]) -> Any:
        if isinstance(params, EditorProblemsParams) and params.files is None:
            editor.asked.append(params)
            answers = [
                FileProblemsAnswer(path=str(path), covered=True, settled=True, problems=problems)
                for path, problems in files.items()
            ]
            return EditorProblemsResult(files=answers, waited_seconds=WAIT_SECONDS)
        return await answer_files(method, params, result)

    editor.request = request  # type: ignore[method-assign]


def problem(line: int, severity: Any, message: str) -> EditorProblem:
    return EditorProblem(line=line, character=0, severity=severity, message=message, source="toy")


async def test_a_workspace_mention_is_the_problems_tools_answer_errors_first(
    runtime_with: RuntimeWith, workspace: Path, editor: ScriptedEditor
) -> None:
    for name in ("a.ts", "b.ts"):
        (workspace / name).write_text("one\ntwo\n", encoding="utf-8")
    editor_knows(
        editor,
        {
            workspace / "a.ts": [problem(0, "warning", "unused"), problem(1, "hint", "style")],
            workspace / "b.ts": [problem(1, "error", "bad type")],
            Path("/elsewhere/c.ts"): [problem(0, "error", "not this workspace's")],
        },
    )
    rt = runtime_with({})
    text = await attached_problems_text(rt, None)
    assert text == (
        f"{HEAD}:\n2 problems in the workspace:\nb.ts:2:1 error (toy): bad type\na.ts:1:1 warning (toy): unused"
    )
    [asked] = editor.asked
    assert asked.files is None and not asked.wait  # what the editor knows now: the Problems tool's question
    assert text == f"{HEAD}:\n{(await run1(rt, 'Problems')).text()}"


async def test_a_mention_over_the_cap_announces_it(
    runtime_with: RuntimeWith, workspace: Path, editor: ScriptedEditor
) -> None:
    many = "BAD\n" * 130
    (workspace / "big.ts").write_text(many, encoding="utf-8")
    editor_knows(editor, {workspace / "big.ts": toy_problems(many)})
    lines = (await attached_problems_text(runtime_with({}), None)).splitlines()
    assert lines[:2] == [
        f"{HEAD}:",
        "130 problems in the workspace (showing 100 of 130; give a file or directory to narrow the list):",
    ]
    assert len(lines) == 102 and lines[-1] == "big.ts:100:1 error (toy): BAD is not allowed"


async def test_a_mention_of_a_file_waits_for_its_language_server(
    runtime_with: RuntimeWith, workspace: Path, editor: ScriptedEditor
) -> None:
    (workspace / "main.ts").write_text("ok\nBAD\n", encoding="utf-8")
    text = await attached_problems_text(runtime_with({}), str(workspace / "main.ts"))
    assert text == f"{HEAD}:\n1 problem in main.ts:\nmain.ts:2:1 error (toy): BAD is not allowed"
    [asked] = editor.asked
    assert asked.wait and asked.files is not None and asked.files[0].path == str(workspace / "main.ts")


async def test_files_read_may_not_show_are_left_out_of_a_tree_and_said_so(
    runtime_with: RuntimeWith, workspace: Path, editor: ScriptedEditor
) -> None:
    # A problem's message may quote its line: a guarded file's or a credential file's problems are not listed.
    (workspace / "secret").mkdir()
    for name in ("a.ts", "secret/k.ts", ".env"):
        (workspace / name).write_text("BAD\n", encoding="utf-8")
    editor_knows(
        editor,
        {
            workspace / "a.ts": [problem(0, "error", "BAD is not allowed")],
            workspace / "secret" / "k.ts": [problem(0, "error", "'hunter2' is not assignable")],
            workspace / ".env": [problem(0, "warning", "TOKEN=sk-live-123 has no quotes")],
        },
    )
    rt = runtime_with({"deny": ["Read(secret/**)"]})
    expected = (
        "1 problem in the workspace:\n"
        "a.ts:1:1 error (toy): BAD is not allowed\n"
        "The problems of 1 file are left out: permission rules forbid reading it.\n"
        "The problems of 1 file holding credentials (.env files, keys) are left out; Problems with such a file's "
        "path asks the user first."
    )
    assert (await run1(rt, "Problems")).text() == expected
    assert await attached_problems_text(rt, None) == f"{HEAD}:\n{expected}"


async def test_a_rule_that_denies_the_problems_keeps_the_mention_out(
    runtime_with: RuntimeWith, workspace: Path, editor: ScriptedEditor
) -> None:
    text = await attached_problems_text(runtime_with({"deny": ["Problems"]}), None)
    assert text.startswith(f"{HEAD}, but they are not shown: ") and "`Problems`" in text, text
    assert editor.asked == []


async def test_an_editor_that_is_gone_is_named(runtime_with: RuntimeWith, editor: ScriptedEditor) -> None:
    editor.gone = True
    assert await attached_problems_text(runtime_with({}), None) == (
        f"{HEAD}, but they could not be listed. The editor could not list the problems (the editor has "
        "disconnected). Try again, or run the checks."
    )


async def test_without_an_editor_the_mention_says_the_problems_need_one(runtime: Runtime) -> None:
    text = await attached_problems_text(runtime, None)
    assert text.startswith(f"{HEAD}, but this session has no editor to ask: ")
    assert "need toolgate running in the editor" in text
