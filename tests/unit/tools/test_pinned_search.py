"""Grep and Glob search where their permission decision saw the root lead, or nowhere.

The attack: a background command swaps a workspace folder for a symbolic link to a folder outside (`mv d d.x;
ln -s ~/.aws d`) while the person reviews the search, or right after the last check; ripgrep, given the folder's
name, would follow the link and print lines (or names) of files outside what was approved. Here the policy asks
about every call inside the workspace, and the approver (or the runner of ripgrep) swaps the folder first.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.unit.tools.pinning import InsideAsks, SwappingApprover, swap_for_link

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import run1
from toolgate.tools import _pinned, _search
from toolgate.tools._ripgrep import RIPGREP, RgRun, Ripgrep, SearchAt, find_ripgrep


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
    """A folder outside the workspace holding a file every search below matches."""
    folder = tmp_path / "aws"
    folder.mkdir()
    (folder / "credentials-copy.txt").write_text("needle SECRET_KEY=abc\n")
    return folder


@pytest.fixture
def folder(workspace: Path) -> Path:
    """The workspace folder the model searches (and a background command swaps)."""
    d = workspace / "d"
    d.mkdir()
    (d / "notes.txt").write_text("needle harmless\n")
    return d


def _leaked(text: str) -> bool:
    return "SECRET" in text or "credentials-copy" in text


SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("Grep", {"pattern": "needle", "path": "d", "output_mode": "content"}),
    ("Grep", {"pattern": "needle", "path": "d"}),
    ("Grep", {"pattern": "needle", "path": "d", "output_mode": "count"}),
    ("Glob", {"pattern": "**/*", "path": "d"}),
    ("Glob", {"pattern": "d/**/*.txt"}),
]


@pytest.mark.parametrize(("tool", "tool_input"), SEARCHES)
async def test_a_search_refuses_when_its_folder_became_a_link_while_it_was_approved(
    rt: Runtime, approver: SwappingApprover, folder: Path, outside: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    approver.swap = swap_for_link(folder, outside)
    result = await run1(rt, tool, **tool_input)
    assert result.is_error, result.text()
    assert not _leaked(result.text()), result.text()
    assert f"d itself is now a symbolic link to {outside}" in result.text()
    assert "Nothing was searched" in result.text() and "call again" in result.text()


async def test_a_grep_of_a_file_refuses_when_its_folder_became_a_link(
    rt: Runtime, approver: SwappingApprover, folder: Path, outside: Path
) -> None:
    (outside / "notes.txt").write_text("needle SECRET_KEY=abc\n")
    approver.swap = swap_for_link(folder, outside)
    result = await run1(rt, "Grep", pattern="needle", path="d/notes.txt", output_mode="content")
    assert result.is_error, result.text()
    assert "SECRET" not in result.text()
    assert "Nothing was searched" in result.text()


@dataclass(frozen=True)
class SwapAtStart(Ripgrep):
    """The real ripgrep, with a folder swapped right before it starts: after every check, as a race would."""

    swap: Callable[[], None] = lambda: None

    async def run(self, args: Sequence[str], at: SearchAt | None = None) -> RgRun:
        self.swap()
        return await super().run(args, at)


@pytest.mark.parametrize(("tool", "tool_input"), SEARCHES)
async def test_ripgrep_searches_the_approved_folder_even_when_it_is_swapped_as_ripgrep_starts(
    rt: Runtime, folder: Path, outside: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    """The folder it was handed is the one the decision saw: the name may lead anywhere by then."""
    rt.session.deps.override(RIPGREP, SwapAtStart(find_ripgrep(), swap=swap_for_link(folder, outside)))
    result = await run1(rt, tool, **tool_input)
    assert not result.is_error, result.text()
    assert not _leaked(result.text()), result.text()
    assert "d/notes.txt" in result.text()  # what was in the folder the decision saw, named as the model did


@pytest.mark.parametrize(
    ("path", "refusal"),
    [("d", "d itself is now a symbolic link"), ("d/sub", "d on the way to d/sub became a symbolic link")],
)
async def test_a_swap_between_the_last_check_and_the_open_is_refused_by_the_walk(
    rt: Runtime, folder: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, path: str, refusal: str
) -> None:
    """The real path still matches the pin when it is checked; the folder is swapped right after. Walking the pin
    from `/` without following a link finds the link, and nothing is searched."""
    (folder / "sub").mkdir()
    (outside / "sub").mkdir()
    (outside / "sub/more-credentials.txt").write_text("needle SECRET_KEY=abc\n")
    swap = swap_for_link(folder, outside)
    check = _pinned.real_path

    def check_then_swap(path: Path) -> str:
        now = check(path)
        swap()
        return now

    monkeypatch.setattr(_pinned, "real_path", check_then_swap)  # the check `open_search_root` makes
    result = await run1(rt, "Grep", pattern="needle", path=path, output_mode="content")
    assert result.is_error, result.text()
    assert not _leaked(result.text()) and "more-credentials" not in result.text()
    assert f"{refusal} to {outside}" in result.text()
    assert "Nothing was searched" in result.text()


# --- what a search shows is what it showed before ---------------------------------------------------------


async def test_searches_name_paths_as_the_model_named_the_root(rt: Runtime, workspace: Path, folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "sub/deep.py").write_text("x = 1\nneedle = './d/proc/self/fd/5/'\n")
    content = await run1(rt, "Grep", pattern="needle", path="d", output_mode="content")
    assert content.text().splitlines() == [
        "d/notes.txt:1:needle harmless",
        "d/sub/deep.py:2:needle = './d/proc/self/fd/5/'",  # a path in a matched line is text, left alone
    ]
    files = await run1(rt, "Grep", pattern="needle", path=str(folder))
    assert sorted(files.text().splitlines()[1:]) == ["d/notes.txt", "d/sub/deep.py"]
    counts = await run1(rt, "Grep", pattern="needle", path="d/", output_mode="count")
    assert counts.text().splitlines()[:2] == ["d/notes.txt:1", "d/sub/deep.py:1"]
    listed = await run1(rt, "Glob", pattern="**/*.py", path="d")
    assert listed.text() == "d/sub/deep.py"
    everything = await run1(rt, "Grep", pattern="needle", output_mode="content", glob="sub/*.py")
    assert everything.text() == "No matches for 'needle' in the workspace (only files with glob 'sub/*.py')."


async def test_a_single_file_and_a_link_the_person_made_are_searched_as_before(
    rt: Runtime, workspace: Path, folder: Path
) -> None:
    one = await run1(rt, "Grep", pattern="needle", path="d/notes.txt", output_mode="content")
    assert one.text() == "d/notes.txt:1:needle harmless"
    assert (await run1(rt, "Grep", pattern="needle", path="d/notes.txt")).text() == "Found 1 file\nd/notes.txt"
    (workspace / "shortcut").symlink_to("d", target_is_directory=True)  # made before the call: it is approved
    (workspace / "note-link.txt").symlink_to("d/notes.txt")
    via = await run1(rt, "Grep", pattern="needle", path="shortcut", output_mode="content")
    assert via.text() == "shortcut/notes.txt:1:needle harmless"
    assert (await run1(rt, "Glob", pattern="shortcut/*.txt")).text() == "shortcut/notes.txt"
    linked = await run1(rt, "Grep", pattern="needle", path="note-link.txt", output_mode="count")
    assert linked.text().splitlines()[0] == "note-link.txt:1"


async def test_ripgrep_complaints_name_the_root_as_the_model_did(rt: Runtime, workspace: Path, folder: Path) -> None:
    (folder / ".gitignore").write_text("a[\n")  # a glob ripgrep cannot parse: it says so and searches on
    grep = await run1(rt, "Grep", pattern="needle", path="d")
    assert f"{folder}/.gitignore: line 1: error parsing glob" in grep.text(), grep.text()
    glob = await run1(rt, "Glob", pattern="*.txt", path="d")
    assert f"{folder}/.gitignore: line 1" in glob.text(), glob.text()
    assert "./" not in grep.text() + glob.text() and "/proc/self" not in grep.text() + glob.text()


async def test_a_root_removed_after_its_check_is_missing_and_nothing_is_searched(
    rt: Runtime, folder: Path, approver: SwappingApprover
) -> None:
    def remove() -> None:
        (folder / "notes.txt").unlink()
        folder.rmdir()

    approver.swap = remove
    result = await run1(rt, "Grep", pattern="needle", path="d")
    assert result.is_error, result.text()
    assert "No file or directory exists at" in result.text() and "Nothing was searched" in result.text()


async def test_exclusions_with_folders_are_relative_to_the_searched_folder(rt: Runtime, folder: Path) -> None:
    """ripgrep runs in the searched folder, so an exclusion with a folder in it counts from there, as a glob that
    picks files does (before, it counted from the sidecar's own directory, whatever was searched)."""
    (folder / "gen").mkdir()
    (folder / "gen/made.txt").write_text("needle made\n")
    kept = await run1(rt, "Grep", pattern="needle", path="d", glob="!gen/**")
    assert kept.text() == "Found 1 file\nd/notes.txt"
    picked = await run1(rt, "Grep", pattern="needle", path="d", glob="gen/*.txt")
    assert picked.text() == "Found 1 file\nd/gen/made.txt"


async def test_without_proc_the_root_is_searched_by_name_once_its_pin_is_checked(
    rt: Runtime, approver: SwappingApprover, folder: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "_OPENED_ROOTS", False)
    assert (await run1(rt, "Grep", pattern="needle", path="d", output_mode="content")).text() == (
        "d/notes.txt:1:needle harmless"
    )
    approver.swap = swap_for_link(folder, outside)
    refused = await run1(rt, "Glob", pattern="**/*", path="d")
    assert refused.is_error and not _leaked(refused.text())
    assert "Nothing was searched" in refused.text()


async def test_no_descriptor_is_left_open(rt: Runtime, approver: SwappingApprover, folder: Path, outside: Path) -> None:
    """Each search opens its root; whether ripgrep ran, failed to parse the pattern, or the root was refused, the
    descriptor is closed (a long session runs thousands of searches)."""
    await run1(rt, "Grep", pattern="needle", path="d")  # warm-up: whatever the runtime opens once
    before = len(os.listdir("/proc/self/fd"))
    for tool_input in [
        {"pattern": "needle", "path": "d", "output_mode": "content"},
        {"pattern": "needle", "path": "d/notes.txt"},
        {"pattern": "(unclosed", "path": "d"},
    ]:
        await run1(rt, "Grep", **tool_input)
    await run1(rt, "Glob", pattern="**/*", path="d")
    approver.swap = swap_for_link(folder, outside)
    assert (await run1(rt, "Grep", pattern="needle", path="d")).is_error
    assert len(os.listdir("/proc/self/fd")) == before
