"""Issue 27 §5: a read-only program runs what the repository's own configuration names. `git status` runs a
`core.fsmonitor` hook, `git diff` a textconv driver or `diff.external`: with real git, in real repositories,
such a repository makes those commands ask (the configuration is not under version control, so a planted
repository can say anything), while an ordinary repository keeps them read-only. Likewise the environment the
commands inherit: with CDPATH set, `cd name` may move elsewhere, so later paths cannot be placed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.unit.permissions.helpers import bash, make_runtime

from toolgate.bash.programs.git_config import programs_in_config
from toolgate.core.permission import PermissionMode


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, start_new_session=True)
    return done.stdout


def _repository(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    _git(path, "config", "user.email", "t@example.com")
    _git(path, "config", "user.name", "t")
    (path / "a.txt").write_text("one\n")
    _git(path, "add", "a.txt")
    _git(path, "commit", "-qm", "one")
    (path / "a.txt").write_text("two\n")
    return path


async def _decision(workspace: Path, command: str) -> tuple[str, str]:
    rt = make_runtime(workspace, mode=PermissionMode.DEFAULT)
    try:
        result = await bash(rt, command)
    finally:
        await rt.aclose()
    return result.decision, result.reason


async def test_an_ordinary_repository_keeps_git_reads_read_only(workspace: Path) -> None:
    _repository(workspace)
    _git(workspace, "config", "core.hooksPath", ".husky")  # common, and no read-only subcommand runs a hook
    _git(workspace, "config", "filter.lfs.process", "git-lfs filter-process")
    for command in ("git status", "git diff", "git log -p -1"):
        decision, reason = await _decision(workspace, command)
        assert decision == "allow", (command, reason)


async def test_fsmonitor_in_the_repository_config_makes_git_status_ask(workspace: Path, tmp_path: Path) -> None:
    _repository(workspace)
    marker = tmp_path / "ran"
    _git(workspace, "config", "core.fsmonitor", f"touch {marker}; false")
    _git(workspace, "status", "--porcelain")  # real git runs the hook: the configuration is not idle text
    assert marker.exists()
    decision, reason = await _decision(workspace, "git status")
    assert decision == "ask" and "core.fsmonitor" in reason, reason


@pytest.mark.parametrize(
    ("key", "value", "command"),
    [
        ("diff.external", "sh -c 'touch x'", "git diff"),
        ("diff.txt.textconv", "sh -c 'touch x'", "git log -p -1"),
        ("filter.x.clean", "sh -c 'touch x'", "git status"),
        ("log.showSignature", "true", "git log -1"),
        ("include.path", "/tmp/elsewhere", "git show HEAD"),
    ],
)
async def test_entries_that_name_programs_make_git_reads_ask(
    workspace: Path, key: str, value: str, command: str
) -> None:
    _repository(workspace)
    _git(workspace, "config", key, value)
    decision, reason = await _decision(workspace, command)
    assert decision == "ask" and key.lower() in reason.lower(), reason


async def test_a_planted_repository_in_a_subdirectory_is_found_from_there(workspace: Path) -> None:
    _repository(workspace)
    planted = _repository(workspace / "vendor" / "lib")
    _git(planted, "config", "core.fsmonitor", "sh -c 'touch x'")
    assert (await _decision(workspace, "git status"))[0] == "allow"
    decision, reason = await _decision(planted, "git status")
    assert decision == "ask" and str(planted) in reason, reason


async def test_a_submodule_config_counts(workspace: Path) -> None:
    _repository(workspace)
    module = workspace / ".git" / "modules" / "dep"
    module.mkdir(parents=True)
    (module / "config").write_text('[diff "x"]\n\ttextconv = sh -c "touch y"\n')
    decision, reason = await _decision(workspace, "git diff")
    assert decision == "ask" and "textconv" in reason, reason


async def test_network_entries_only_count_for_a_command_that_talks_to_a_remote(workspace: Path) -> None:
    _repository(workspace)
    _git(workspace, "config", "core.sshCommand", "sh -c 'touch x'")
    _git(workspace, "remote", "add", "origin", "git@example.com:a/b.git")
    assert (await _decision(workspace, "git status"))[0] == "allow"
    decision, reason = await _decision(workspace, "git ls-remote origin")
    assert decision == "ask" and "core.sshcommand" in reason.lower(), reason


def test_the_reader_fails_closed_on_lines_it_cannot_follow() -> None:
    assert programs_in_config("[core]\n\tfsmonitor = a \\\n b\n") == ["?"]
    assert programs_in_config("[core\n") == ["?"]
    assert programs_in_config("[core]\n\tfsmonitor = true\n\tbare = false # comment\n") == []
    assert programs_in_config("[diff.x]\n\ttextconv = cat\n") == ["diff.x.textconv"]
    assert programs_in_config('[remote "o"]\n\turl = ext::sh -c x\n', network=True) == ["remote.o.url"]


async def test_with_cdpath_set_a_bare_cd_target_may_be_elsewhere(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "a.txt").write_text("x\n")
    assert (await _decision(workspace, "cd src && cat a.txt"))[0] == "allow"
    monkeypatch.setenv("CDPATH", str(tmp_path))
    decision, reason = await _decision(workspace, "cd src && cat a.txt")
    assert decision == "ask" and "CDPATH" in reason, reason
    assert (await _decision(workspace, "cd ./src && cat a.txt"))[0] == "allow"
