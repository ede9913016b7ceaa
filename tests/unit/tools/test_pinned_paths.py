"""A file tool reads and writes where its permission decision saw the path lead, or nowhere.

The attack: a background command swaps a workspace folder for a symbolic link to a folder outside while the person
reviews the call (or while acceptEdits lets it through); the write or read must not follow the link out. Here the
policy at the boundary asks about every call whose paths really lie inside the workspace (denying any other), and
the approver swaps the folder before it answers "yes", as the background command would.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel
from tests.unit.tools.pinning import InsideAsks, SwappingApprover, swap_for_link

from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError
from toolgate.core.permission import Decision, PermissionMode
from toolgate.core.tool import AnyTool
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import run1, use
from toolgate.tools._write import atomic_write


@pytest.fixture
def approver() -> SwappingApprover:
    return SwappingApprover()


@pytest.fixture
async def rt(workspace: Path, approver: SwappingApprover) -> AsyncIterator[Runtime]:
    runtime = build_runtime(workspace, approver, RuntimeOptions(mode=PermissionMode.DEFAULT, policy=InsideAsks()))
    yield runtime
    await runtime.aclose()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "autostart"
    folder.mkdir()
    return folder


async def test_write_of_a_new_file_refuses_when_its_folder_became_a_link(
    rt: Runtime, approver: SwappingApprover, workspace: Path, outside: Path
) -> None:
    (workspace / "d").mkdir()
    approver.swap = swap_for_link(workspace / "d", outside)
    result = await run1(rt, "Write", file_path="d/evil.desktop", content="[Desktop Entry]\nExec=evil\n")
    assert result.is_error, result.text()
    assert f"d on the way to d/evil.desktop became a symbolic link to {outside}" in result.text()
    assert "Nothing was written" in result.text() and "call again" in result.text()
    assert list(outside.iterdir()) == []
    assert list((workspace / "d.x").iterdir()) == []


async def test_edit_refuses_when_its_folder_became_a_link_to_a_same_named_file(
    rt: Runtime, approver: SwappingApprover, workspace: Path, outside: Path
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d/conf.txt").write_text("key = 1\n")
    (outside / "conf.txt").write_text("key = 1\n")  # the same text: the freshness check alone would let it through
    assert not (await run1(rt, "Read", file_path="d/conf.txt")).is_error
    approver.swap = swap_for_link(workspace / "d", outside)
    result = await run1(rt, "Edit", file_path="d/conf.txt", old_string="key = 1", new_string="key = 2")
    assert result.is_error, result.text()
    assert "d on the way to d/conf.txt became a symbolic link" in result.text()
    assert (outside / "conf.txt").read_text() == "key = 1\n"
    assert (workspace / "d.x/conf.txt").read_text() == "key = 1\n"
    assert sorted(p.name for p in outside.iterdir()) == ["conf.txt"]


async def test_apply_patch_adding_a_file_refuses_when_its_folder_became_a_link(
    rt: Runtime, approver: SwappingApprover, workspace: Path, outside: Path
) -> None:
    (workspace / "d").mkdir()
    approver.swap = swap_for_link(workspace / "d", outside)
    patch = "*** Begin Patch\n*** Add File: d/evil.desktop\n+[Desktop Entry]\n*** End Patch\n"
    result = await run1(rt, "ApplyPatch", patch=patch)
    assert result.is_error, result.text()
    assert "d on the way to d/evil.desktop became a symbolic link" in result.text()
    assert list(outside.iterdir()) == []
    assert list((workspace / "d.x").iterdir()) == []


async def test_read_refuses_when_its_folder_became_a_link(
    rt: Runtime, approver: SwappingApprover, workspace: Path, outside: Path
) -> None:
    (workspace / "d").mkdir()
    (workspace / "d/id_rsa").write_text("a harmless file\n")
    (outside / "id_rsa").write_text("-----BEGIN SECRET KEY-----\n")
    approver.swap = swap_for_link(workspace / "d", outside)
    result = await run1(rt, "Read", file_path="d/id_rsa")
    assert result.is_error, result.text()
    assert "SECRET" not in result.text()
    assert f"d on the way to d/id_rsa became a symbolic link to {outside}" in result.text()
    assert "Nothing was read" in result.text()


async def test_a_link_at_the_file_name_is_still_written_through(
    rt: Runtime, workspace: Path, approver: SwappingApprover
) -> None:
    (workspace / "real.txt").write_text("old\n")
    (workspace / "link.txt").symlink_to("real.txt")
    assert not (await run1(rt, "Read", file_path="link.txt")).is_error
    result = await run1(rt, "Write", file_path="link.txt", content="new\n")
    assert not result.is_error, result.text()
    assert (workspace / "link.txt").is_symlink() and (workspace / "real.txt").read_text() == "new\n"


async def test_a_write_still_creates_its_missing_folders(rt: Runtime, workspace: Path) -> None:
    result = await run1(rt, "Write", file_path="a/b/c.txt", content="one\n")
    assert not result.is_error, result.text()
    assert (workspace / "a/b/c.txt").read_text() == "one\n"


def test_the_write_walks_its_real_path_and_refuses_a_link_on_the_way(workspace: Path, outside: Path) -> None:
    """The last line of defence: a folder swapped between the final check and the write is not followed."""
    (workspace / "d").symlink_to(outside, target_is_directory=True)
    target = workspace / "d" / "evil.desktop"  # what a pin of the real path before the swap would hold
    with pytest.raises(StateError) as caught:
        atomic_write(target, b"x", None, "d/evil.desktop")
    assert f"{workspace / 'd'} on the way to d/evil.desktop became a symbolic link to {outside}" in str(caught.value)
    assert list(outside.iterdir()) == []
    assert not any(name.endswith(".tg-tmp") for name in os.listdir(workspace))


@dataclass
class RecordingPins:
    """Allows, rewriting the path to `rewrite_to` when set; keeps what `ctx.pinned` held as it decided."""

    rewrite_to: str | None = None
    seen: dict[Path, str] | None = None
    ctx: ToolContext | None = None

    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        self.seen, self.ctx = dict(ctx.pinned), ctx
        updated = None if self.rewrite_to is None else {"file_path": self.rewrite_to}
        return Decision(behavior="allow", reason="recorded", updated_input=updated)


async def test_the_runner_pins_real_paths_before_deciding_and_again_for_a_rewritten_input(
    workspace: Path, outside: Path
) -> None:
    (workspace / "d").symlink_to(outside, target_is_directory=True)
    (outside / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("b\n")
    policy = RecordingPins(rewrite_to="b.txt")
    runtime = build_runtime(workspace, SwappingApprover(), RuntimeOptions(mode=PermissionMode.DEFAULT, policy=policy))
    try:
        result = await run1(runtime, "Read", file_path="d/a.txt")
    finally:
        await runtime.aclose()
    assert not result.is_error and "b" in result.text()
    assert policy.seen == {workspace / "d/a.txt": str(outside / "a.txt")}
    assert policy.ctx is not None and policy.ctx.pinned == {workspace / "b.txt": str(workspace / "b.txt")}


async def test_the_permission_engine_judges_the_pinned_real_path(workspace: Path, outside: Path) -> None:
    """The ladder takes the pin as the path's resolution: what it approves is what the tools are held to."""
    (workspace / "a.txt").write_text("a\n")
    runtime = build_runtime(workspace, SwappingApprover(), RuntimeOptions(mode=PermissionMode.DEFAULT))
    try:
        prepared = runtime.runner.prepare(use("Read", file_path="a.txt"))
        assert prepared.tool is not None and prepared.tool_input is not None
        ctx = runtime.runner.new_context("t1")
        assert (await runtime.permissions.evaluate(prepared.tool, prepared.tool_input, ctx)).behavior == "allow"
        ctx = runtime.runner.new_context("t2")
        ctx.pinned = {workspace / "a.txt": str(outside / "a.txt")}  # it led outside when it was pinned
        assert (await runtime.permissions.evaluate(prepared.tool, prepared.tool_input, ctx)).behavior != "allow"
    finally:
        await runtime.aclose()
