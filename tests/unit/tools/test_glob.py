"""Glob on real trees: ignore rules, hidden files, .git, symlinks, odd names, order, caps and errors."""

from __future__ import annotations

import os
from pathlib import Path

from toolgate.core.permission import PermissionMode
from toolgate.core.tool import DescribeContext
from toolgate.runtime import Runtime
from toolgate.testing import run1, use
from toolgate.tools.glob import GlobInput, GlobTool


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)


def set_mtimes(root: Path, names: list[str]) -> None:
    """Give `names` increasing modification times, so the last one is the newest."""
    for age, name in enumerate(names):
        os.utime(root / name, ns=(1_700_000_000_000_000_000 + age * 10**9,) * 2)


def listed(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("[", "No files"))]


async def test_newest_first_relative_paths(runtime: Runtime, workspace: Path) -> None:
    names = ["src/old.py", "src/pkg/mid.py", "top.py", "src/new.py", "notes.md"]
    write_tree(workspace, dict.fromkeys(names, "x"))
    set_mtimes(workspace, names)
    result = await run1(runtime, "Glob", pattern="**/*.py")
    assert not result.is_error
    assert result.text() == "src/new.py\ntop.py\nsrc/pkg/mid.py\nsrc/old.py"


async def test_single_star_stays_in_the_directory(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"a.py": "", "sub/b.py": ""})
    assert (await run1(runtime, "Glob", pattern="*.py")).text() == "a.py"
    assert (await run1(runtime, "Glob", pattern="*.py", path="sub")).text() == "sub/b.py"
    assert (await run1(runtime, "Glob", pattern="sub/*.py")).text() == "sub/b.py"


async def test_gitignore_respected_hidden_included_git_excluded(runtime: Runtime, workspace: Path) -> None:
    write_tree(
        workspace,
        {
            ".git/config": "x",
            ".git/hooks/pre-commit.py": "x",
            ".gitignore": "build/\n*.log\nsecret.py\n",
            "build/out.py": "x",
            "app.log": "x",
            "secret.py": "x",
            "keep.py": "x",
            ".hidden/h.py": "x",
            ".env": "x",
        },
    )
    result = await run1(runtime, "Glob", pattern="**/*.py")
    assert sorted(listed(result.text())) == [".hidden/h.py", "keep.py"]  # not secret.py, even though it matches
    everything = await run1(runtime, "Glob", pattern="**/*")
    assert sorted(listed(everything.text())) == [".env", ".gitignore", ".hidden/h.py", "keep.py"]


async def test_symlinks_are_not_followed_and_loops_end(runtime: Runtime, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_tree(outside, {"leak.py": "x"})
    write_tree(workspace, {"real/a.py": "x"})
    (workspace / "loop").symlink_to(workspace)
    (workspace / "real" / "up").symlink_to("..")
    (workspace / "out").symlink_to(outside)
    (workspace / "alias.py").symlink_to(workspace / "real" / "a.py")
    result = await run1(runtime, "Glob", pattern="**/*.py")
    assert listed(result.text()) == ["real/a.py"]


async def test_unicode_and_spaces_in_names(runtime: Runtime, workspace: Path) -> None:
    names = ["dir with space/file name.txt", "ünïcödé/日本語.txt", "emoji 🙂.txt"]
    write_tree(workspace, dict.fromkeys(names, "x"))
    result = await run1(runtime, "Glob", pattern="**/*.txt")
    assert sorted(listed(result.text())) == sorted(names)
    exact = await run1(runtime, "Glob", pattern="dir with space/file name.txt")
    assert exact.text() == "dir with space/file name.txt"


async def test_absolute_pattern_is_split_into_directory_and_pattern(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"src/app/x.ts": "", "src/app/deep/y.ts": "", "other/z.ts": ""})
    result = await run1(runtime, "Glob", pattern=f"{workspace}/src/**/*.ts")
    assert sorted(listed(result.text())) == ["src/app/deep/y.ts", "src/app/x.ts"]
    glob = GlobTool()
    ctx = runtime.runner.new_context("t")
    assert glob.paths(GlobInput(pattern=f"{workspace}/src/**/*.ts"), ctx) == [workspace / "src"]
    assert glob.paths(GlobInput(pattern="*.ts", path="other"), ctx) == [workspace / "other"]


async def test_cap_of_100_is_announced_with_the_total(runtime: Runtime, workspace: Path) -> None:
    names = [f"f{i:03d}.txt" for i in range(250)]
    write_tree(workspace, dict.fromkeys(names, ""))
    set_mtimes(workspace, names)
    result = await run1(runtime, "Glob", pattern="*.txt")
    lines = result.text().splitlines()
    assert lines[:2] == ["f249.txt", "f248.txt"]
    assert len(listed(result.text())) == 100
    assert lines[-1] == (
        "[Showing the 100 most recently modified of 250 matching files. "
        "To see the others, narrow the pattern or search a subdirectory (path).]"
    )


async def test_no_match_is_a_plain_notice_with_a_hint(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"sub/a.rs": ""})
    result = await run1(runtime, "Glob", pattern="*.rs")
    assert not result.is_error
    assert result.text() == (
        "No files match *.rs in the workspace. (*.rs matches only files directly in that directory; "
        "to look in subdirectories too, use **/*.rs.)"
    )
    deep = await run1(runtime, "Glob", pattern="**/*.go")
    assert deep.text() == "No files match **/*.go in the workspace."
    directory = await run1(runtime, "Glob", pattern="sub")
    assert "sub is a directory, and Glob lists files: use sub/** to list what is in it." in directory.text()


async def test_missing_directory_suggests_a_near_name(runtime: Runtime, workspace: Path) -> None:
    (workspace / "source").mkdir()
    result = await run1(runtime, "Glob", pattern="*.py", path="sourse")
    assert result.is_error and 'kind="state"' in result.text()
    assert f"No directory exists at {workspace / 'sourse'}. Did you mean {workspace / 'source'}?" in result.text()
    (workspace / "file.txt").write_text("")
    not_dir = await run1(runtime, "Glob", pattern="*", path="file.txt")
    assert not_dir.is_error and 'kind="state"' in not_dir.text() and "is a file, not a directory" in not_dir.text()


async def test_outside_the_workspace_needs_approval(runtime: Runtime, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    result = await run1(runtime, "Glob", pattern=f"{tmp_path}/elsewhere/*")
    assert result.is_error and 'kind="permission"' in result.text()
    escaping = await run1(runtime, "Glob", pattern="../elsewhere/*")
    assert escaping.is_error and 'kind="permission"' in escaping.text()


async def test_parallel_calls_in_one_turn(runtime: Runtime, workspace: Path) -> None:
    write_tree(workspace, {"a/x.py": "", "b/y.py": "", "c/z.txt": ""})
    uses = [use("Glob", pattern=p) for p in ("a/*", "b/*", "c/*", "**/*.md")]
    results = await runtime.orchestrator.run_turn(uses)
    assert [r.tool_use_id for r in results] == [u.id for u in uses]
    assert [r.text() for r in results[:3]] == ["a/x.py", "b/y.py", "c/z.txt"]
    assert results[3].text().startswith("No files match")


def test_contract(workspace: Path) -> None:
    glob = GlobTool()
    tool_input = GlobInput(pattern="*")
    assert glob.is_read_only(tool_input) and glob.is_concurrency_safe(tool_input)
    schema = glob.input_schema()
    assert schema["required"] == ["pattern"] and schema["additionalProperties"] is False
    description = glob.description(DescribeContext(frozenset({"Glob", "Grep"}), PermissionMode.DEFAULT, workspace))
    assert "most recently modified first" in description and "Grep" in description
