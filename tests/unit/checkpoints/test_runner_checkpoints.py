"""Checkpoints through the real runner: before each call that may change files, none before read-only calls,
and a call whose checkpoint fails still runs, with the warning in its result."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolgate.checkpoints.session import CHECKPOINTS, SessionCheckpoints, attach_checkpoints
from toolgate.core.messages import ToolUse
from toolgate.core.permission import PermissionMode
from toolgate.permissions.hooks import hook_digest
from toolgate.permissions.hooks.review import trust_mutation
from toolgate.permissions.settings import update_settings
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover


@pytest.fixture
async def runtime(workspace: Path) -> AsyncIterator[Runtime]:
    rt = build_runtime(workspace, AllowingApprover(), RuntimeOptions(mode=PermissionMode.BYPASS, read_settings=False))
    yield rt
    await rt.aclose()


def _checkpoints(runtime: Runtime) -> SessionCheckpoints:
    found = runtime.session.deps.get(CHECKPOINTS)
    assert found is not None
    return found


async def _call(runtime: Runtime, name: str, **tool_input: object) -> str:
    [result] = await runtime.orchestrator.run_turn(
        [ToolUse(id=f"toolu_{name}_{len(tool_input)}", name=name, input=tool_input)]
    )
    assert not result.is_error, result.text()
    return result.text()


async def test_calls_that_may_change_files_are_checkpointed_first(
    tmp_path: Path, workspace: Path, runtime: Runtime
) -> None:
    checkpoints = attach_checkpoints(runtime.session, tmp_path / "data")
    (workspace / "a.txt").write_text("before\n")
    assert await checkpoints.begin_turn() is None
    await _call(runtime, "Read", file_path=str(workspace / "a.txt"))
    await _call(runtime, "Bash", command="ls")
    assert [c.kind for c in checkpoints.checkpoints()] == ["turn"]  # read-only calls take none

    await _call(runtime, "Bash", command="echo later > a.txt && echo new > b.txt")
    await _call(runtime, "Write", file_path=str(workspace / "c.txt"), content="c\n")
    listed = checkpoints.checkpoints()
    # The checkpoint before Bash is the turn's tree unchanged (no new one); the one right after each call holds
    # what that call changed, and names the checkpoint before it.
    assert [(c.kind, c.tool_use_id, sorted(c.changed), c.agent_since) for c in listed] == [
        ("turn", None, ["a.txt"], None),
        ("tool", "toolu_Bash_1", ["a.txt", "b.txt"], listed[0].id),
        ("tool", "toolu_Write_2", ["c.txt"], listed[1].id),
    ]
    report, touched = checkpoints.restore(listed[0].id)
    assert (workspace / "a.txt").read_text() == "before\n"
    assert not (workspace / "b.txt").exists() and not (workspace / "c.txt").exists()
    assert workspace / "a.txt" in touched and report.redo is not None
    assert str(workspace / "a.txt") not in runtime.session.file_state  # must be Read again
    notice = checkpoints.take_restore_notice()
    assert notice is not None and "a.txt" in notice and listed[0].id in notice
    assert checkpoints.take_restore_notice() is None


async def test_a_failed_checkpoint_warns_in_the_result_and_the_call_still_runs(
    tmp_path: Path, workspace: Path, runtime: Runtime
) -> None:
    (tmp_path / "data").write_text("not a directory")
    attach_checkpoints(runtime.session, tmp_path / "data")
    text = await _call(runtime, "Write", file_path=str(workspace / "new.txt"), content="x\n")
    assert (workspace / "new.txt").read_text() == "x\n"
    assert "this change cannot be rewound: the checkpoint store" in text
    assert _checkpoints(runtime).off_reason is not None


async def test_without_checkpoints_nothing_is_added(workspace: Path, runtime: Runtime) -> None:
    text = await _call(runtime, "Write", file_path=str(workspace / "new.txt"), content="x\n")
    assert "rewound" not in text


async def test_a_resumed_session_goes_on_counting_turns(tmp_path: Path, workspace: Path) -> None:
    first = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    await first.begin_turn()
    await first.begin_turn()
    again = SessionCheckpoints(tmp_path / "data", workspace, "s1")
    await again.begin_turn()
    assert [c.turn for c in again.checkpoints()] == [1, 2, 3]


async def test_what_hooks_change_gets_checkpoints_of_its_own(tmp_path: Path, workspace: Path) -> None:
    settings = workspace / ".toolgate" / "settings.json"
    settings.parent.mkdir()
    post = {"matcher": "Write", "hooks": [{"type": "command", "command": "cat >/dev/null; echo fmt > formatted.txt"}]}
    settings.write_text(json.dumps({"hooks": {"PostToolUse": [post]}}))
    reviewed = hook_digest("PostToolUse", "Write", post["hooks"][0]["command"])  # a workspace hook runs once trusted
    update_settings(Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "settings.json", trust_mutation([reviewed]))
    rt = build_runtime(workspace, AllowingApprover(), RuntimeOptions(mode=PermissionMode.BYPASS, trust_workspace=True))
    try:
        checkpoints = attach_checkpoints(rt.session, tmp_path / "data")
        await checkpoints.begin_turn()
        await _call(rt, "Write", file_path=str(workspace / "new.txt"), content="n\n")
        assert (workspace / "formatted.txt").read_text() == "fmt\n"
        listed = checkpoints.checkpoints()
        # The turn's tree (the Write's checkpoint was the same tree); before the hook: the Write's change;
        # after it: the hook's change alone.
        assert [(c.kind, c.note, c.changed) for c in listed] == [
            ("turn", None, [".toolgate/settings.json"]),
            ("tool", None, ["new.txt"]),
            ("tool", "after PostToolUse hooks", ["formatted.txt"]),
        ]
        checkpoints.restore(listed[-2].id)  # only the hook's change is undone
        assert (workspace / "new.txt").exists() and not (workspace / "formatted.txt").exists()
    finally:
        await rt.aclose()


async def test_additional_working_directories_are_captured_and_restored(tmp_path: Path, workspace: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "lib.py").write_text("v1\n")
    (extra / ".gitignore").write_text("build/\n")  # its own ignore rules apply to it
    (extra / "build").mkdir()
    (extra / "build" / "out.o").write_text("ignored\n")
    options = RuntimeOptions(mode=PermissionMode.BYPASS, read_settings=False, additional_dirs=[extra])
    rt = build_runtime(workspace, AllowingApprover(), options)
    try:
        checkpoints = attach_checkpoints(rt.session, tmp_path / "data")
        await checkpoints.begin_turn()
        await _call(
            rt, "Bash", command=f"printf 'v2\\n' > {extra}/lib.py && printf n > {extra}/new.py && echo w > w.txt"
        )
        await _call(rt, "Write", file_path=str(extra / "other.py"), content="o\n")
        first, second, third = checkpoints.checkpoints()
        assert sorted(second.changed) == sorted(["w.txt", f"{extra}/lib.py", f"{extra}/new.py"])
        assert third.changed == [f"{extra}/other.py"]
        assert list(first.roots) == [str(extra)]

        dry, _ = checkpoints.restore(first.id, dry_run=True)
        assert f"--- a/{extra}/lib.py" in dry.diff and "-v2\n+v1\n" in dry.diff
        report, touched = checkpoints.restore(first.id)
        assert (extra / "lib.py").read_text() == "v1\n"
        assert not (extra / "new.py").exists() and not (extra / "other.py").exists()
        assert not (workspace / "w.txt").exists() and (extra / "build" / "out.o").exists()
        assert extra / "lib.py" in touched and {c.path for c in report.changes} >= {f"{extra}/lib.py", "w.txt"}
        assert report.redo is not None
        checkpoints.restore(report.redo, whole_tree=True)  # redo brings the additional directory's files back too
        assert (extra / "lib.py").read_text() == "v2\n" and (extra / "other.py").read_text() == "o\n"
    finally:
        await rt.aclose()
