"""A read-only verdict runs read-only (real bwrap): a command the ladder allows because it only reads, and every
command in plan mode, runs where nothing is writable, so a wrong verdict fails instead of changing files.

The classifier is made wrong on purpose (`planted`): writing commands come back with a read-only verdict, as a
gap in the tables would give them. With the sandbox on nothing changes; with it off, the same verdict lets the
command write (which is what shows the plant works).
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

import toolgate.bash.classify as classifier_module
import toolgate.tools.bash as bash_tool_module
from toolgate.bash.classify import Classification, classify_uncached
from toolgate.core.messages import ToolResult
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sandbox.runtime import Enabled
from toolgate.sandbox.settings import SandboxRequest
from toolgate.testing import run1

WRONGLY_READ_ONLY = ("touch made.txt", "rm tracked.txt", "git commit -q --allow-empty -m planted", "mkdir .vscode")


def git(workspace: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture
def repository(workspace: Path) -> Path:
    git(workspace, "init", "-q")
    git(workspace, "config", "user.email", "t@example.com")
    git(workspace, "config", "user.name", "T")
    (workspace / "tracked.txt").write_text("keep me\n")
    git(workspace, "add", "tracked.txt")
    git(workspace, "commit", "-q", "-m", "first")
    return workspace


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The classifier calls the writing commands above read-only (the verdict of `cat tracked.txt`)."""

    def wrong(command: str) -> Classification:
        return classify_uncached("cat tracked.txt" if command in WRONGLY_READ_ONLY else command)

    monkeypatch.setattr(classifier_module, "classify", wrong)
    monkeypatch.setattr(bash_tool_module, "classify", wrong)
    yield


def snapshot(workspace: Path) -> tuple[list[str], str, str]:
    names = sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*") if ".git" not in p.parts)
    return names, git(workspace, "log", "--format=%H"), (workspace / "tracked.txt").read_text()


@asynccontextmanager
async def session(workspace: Path, mode: PermissionMode, sandbox: Enabled = "on") -> AsyncIterator[Runtime]:
    options = RuntimeOptions(mode=mode, sandbox=SandboxRequest(enabled=sandbox), read_settings=False)
    runtime = build_runtime(workspace, NonInteractiveApprover(), options)
    try:
        yield runtime
    finally:
        await runtime.aclose()


def text(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.PLAN, PermissionMode.BYPASS])
async def test_a_wrong_read_only_verdict_changes_nothing(repository: Path, planted: None, mode: PermissionMode) -> None:
    before = snapshot(repository)
    async with session(repository, mode) as runtime:
        for command in WRONGLY_READ_ONLY:
            result = text(await run1(runtime, "Bash", command=command))
            assert "needs approval" not in result, result  # allowed, on the wrong verdict
            assert "tried to write" in result, result
            if mode is PermissionMode.PLAN:
                assert "plan mode" in result, result
            else:
                assert "writes: true" in result, result
    assert snapshot(repository) == before


async def test_the_result_names_what_it_tried_to_write(repository: Path, planted: None) -> None:
    async with session(repository, PermissionMode.DEFAULT) as runtime:
        result = text(await run1(runtime, "Bash", command="touch made.txt"))
        assert "made.txt" in result.split("tried to write", 1)[1], result


async def test_without_the_sandbox_the_planted_verdict_writes(repository: Path, planted: None) -> None:
    async with session(repository, PermissionMode.DEFAULT, sandbox="off") as runtime:
        await run1(runtime, "Bash", command="touch made.txt")
    assert (repository / "made.txt").exists()


async def test_git_and_reads_work_read_only_and_nothing_is_writable_but_tmp(repository: Path) -> None:
    (repository / "tracked.txt").write_text("changed\n")  # git status refreshes the index: it must not fail
    async with session(repository, PermissionMode.PLAN) as runtime:
        status = await run1(runtime, "Bash", command="git status --short")
        assert not status.is_error and text(status).strip() == "M tracked.txt", text(status)
        # A program the classifier cannot see into writes nothing either (asked in plan mode: the test's
        # approver says no), so probe what is writable with the shell's own test, which is read-only.
        probe = "for d in . .git ~ /tmp; do test -w $d && echo $d; done"
        writable = await run1(runtime, "Bash", command=probe)
        assert text(writable).split() == ["/tmp"], text(writable)


async def test_calling_again_as_a_writing_command_is_judged_as_one(repository: Path, planted: None) -> None:
    async with session(repository, PermissionMode.PLAN) as runtime:
        asked = text(await run1(runtime, "Bash", command="touch made.txt", writes=True))
        assert "needs approval" in asked, asked  # plan mode asks before anything that writes
    assert not (repository / "made.txt").exists()
    async with session(repository, PermissionMode.DEFAULT) as runtime:
        done = await run1(runtime, "Bash", command="touch made.txt", writes=True)
        assert not done.is_error, text(done)  # sandbox.autoAllow: in the sandbox where the workspace is writable
    assert (repository / "made.txt").exists()


async def test_a_read_only_verdict_never_lets_a_command_out_of_the_sandbox_unasked(
    repository: Path, planted: None
) -> None:
    for mode in (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN):
        async with session(repository, mode) as runtime:
            result = text(await run1(runtime, "Bash", command="touch made.txt", outside_sandbox=True))
            assert "needs approval" in result and "outside the sandbox" in result, result
    assert not (repository / "made.txt").exists()
