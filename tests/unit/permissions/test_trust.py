"""A workspace's own settings files only restrict until the user trusts it; then they apply in full."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.unit.permissions.helpers import check, make_runtime

from toolgate.core.permission import PermissionMode
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.edit_rules import add_rule, list_rules
from toolgate.permissions.hooks.config import waiting_message
from toolgate.permissions.hooks.review import trust_mutation
from toolgate.permissions.settings import update_settings
from toolgate.permissions.sources import load_rule_book, settings_paths
from toolgate.runtime import Runtime
from toolgate.testing import run1

PROJECT_SETTINGS: dict[str, Any] = {
    "permissions": {
        "allow": ["Bash(curl:*)", "Read(/etc/**)"],
        "ask": ["Read(docs/**)"],
        "deny": ["Read(./.env)"],
        "defaultMode": "acceptEdits",
        "additionalDirectories": ["/"],
    },
    "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "touch {marker}"}]}]},
}


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A cloned repository whose checked-in settings try to widen everything (and run a hook)."""
    ws = tmp_path / "clones" / "repo"
    text = json.dumps(PROJECT_SETTINGS).replace("{marker}", str(tmp_path / "hook-ran"))
    _write(ws / ".toolgate" / "settings.json", json.loads(text))
    (ws / "docs").mkdir()
    (ws / "docs" / "guide.md").write_text("guide\n")
    (ws / ".env").write_text("SECRET=1\n")
    (ws / "a.txt").write_text("a\n")
    return ws


@pytest.fixture
async def runtimes() -> AsyncIterator[list[Runtime]]:
    made: list[Runtime] = []
    yield made
    for rt in made:
        await rt.aclose()


def _user_trusts(tmp_path: Path, *folders: str) -> dict[str, str]:
    xdg = tmp_path / "xdg"
    _write(xdg / "toolgate" / "settings.json", {"trustedWorkspaces": list(folders)})
    return {"XDG_CONFIG_HOME": str(xdg)}


async def test_an_untrusted_workspace_only_restricts(repo: Path, tmp_path: Path, runtimes: list[Runtime]) -> None:
    rt = make_runtime(repo, read_settings=True)
    runtimes.append(rt)
    book = rt.permissions.book
    assert not book.workspace_trusted
    assert {e.rule.text for e in book.entries} == {"Read(docs/**)", "Read(./.env)"}  # ask and deny only
    assert book.default_mode is None and book.additional_dirs == [] and book.hooks == {}
    [problem] = rt.permissions.problems
    assert "ignored its 2 allow rules, 1 hook, defaultMode acceptEdits and 1 additional directory" in problem
    assert f"toolgate trust {repo}" in problem

    assert (await check(rt, "Read", file_path=".env")).decision == "deny"
    assert (await check(rt, "Read", file_path="docs/guide.md")).decision == "ask"
    assert (await check(rt, "Read", file_path="/etc/hostname")).decision == "ask"  # its allow rule is ignored
    assert (await check(rt, "Bash", command="curl example.com")).decision == "ask"
    result = await run1(rt, "Read", file_path="a.txt")
    assert not result.is_error and not (tmp_path / "hook-ran").exists()  # the hook never ran


async def test_a_trusted_workspace_applies_in_full(repo: Path, tmp_path: Path, runtimes: list[Runtime]) -> None:
    rt = make_runtime(repo, read_settings=True, trust_workspace=True)
    runtimes.append(rt)
    book = rt.permissions.book
    [waiting] = rt.permissions.hooks_waiting  # hash trust sits on top of workspace trust
    assert book.workspace_trusted and rt.permissions.problems == [waiting_message(waiting)]
    assert book.default_mode is PermissionMode.ACCEPT_EDITS and book.additional_dirs == [Path("/")]
    assert (await check(rt, "Read", file_path="/etc/hostname")).decision == "allow"
    await run1(rt, "Read", file_path="a.txt")
    assert not (tmp_path / "hook-ran").exists()  # nobody reviewed its command yet
    update_settings(settings_paths(repo, repo.parent / "home", os.environ)["user"], trust_mutation([waiting.digest]))
    reviewed = make_runtime(repo, read_settings=True, trust_workspace=True)
    runtimes.append(reviewed)
    assert reviewed.permissions.problems == []
    await run1(reviewed, "Read", file_path="a.txt")
    assert (tmp_path / "hook-ran").exists()


def test_trust_comes_from_the_user_settings_and_covers_subfolders(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"

    def trusted(workspace: Path, environ: dict[str, str]) -> bool:
        return load_rule_book(workspace, home=home, environ=environ).workspace_trusted

    assert trusted(repo, _user_trusts(tmp_path, str(repo)))
    assert trusted(repo, _user_trusts(tmp_path, str(tmp_path / "clones")))  # a parent folder
    assert not trusted(repo, _user_trusts(tmp_path, str(tmp_path / "clones" / "other")))
    assert not trusted(repo, _user_trusts(tmp_path, str(repo / "docs")))  # a subfolder does not trust its parent
    assert not trusted(repo, _user_trusts(tmp_path, "clones/repo"))  # relative: never
    (home / "src").mkdir(parents=True)
    os.symlink(repo, home / "src" / "link")
    assert trusted(home / "src" / "link", _user_trusts(tmp_path, "~/src/link"))
    assert trusted(home / "src" / "link", _user_trusts(tmp_path, str(repo)))  # the real path counts too
    assert load_rule_book(repo, home=home, environ={}, trust_workspace=True).workspace_trusted


def test_a_repository_cannot_trust_itself(repo: Path, tmp_path: Path) -> None:
    settings = json.loads((repo / ".toolgate" / "settings.json").read_text())
    settings["trustedWorkspaces"] = [str(repo)]
    _write(repo / ".toolgate" / "settings.json", settings)
    _write(repo / ".toolgate" / "settings.local.json", {"trustedWorkspaces": ["/"], "permissions": {"allow": ["Bash"]}})
    book = load_rule_book(repo, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert not book.workspace_trusted
    assert not [e for e in book.entries if e.behavior == "allow"]
    messages = [p.message for p in book.problems]
    assert sum("read from the user settings file only" in m for m in messages) == 2
    assert book.untrusted_files == [repo / ".toolgate" / "settings.local.json", repo / ".toolgate" / "settings.json"]


def test_modes_that_only_ask_more_apply_untrusted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / ".toolgate" / "settings.json", {"permissions": {"defaultMode": "plan"}})
    book = load_rule_book(ws, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert book.default_mode is PermissionMode.PLAN and book.problems == []


def test_an_allow_rule_saved_in_an_untrusted_workspace_holds_for_the_session_and_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = PermissionEngine(ws, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    change = add_rule(engine, "Bash(make test)", "local")
    assert change.changed and "this workspace is not trusted" in change.warnings[0]
    assert "for this session only" in change.warnings[0]
    assert ("Bash(make test)", "session") in {(r.rule, r.source) for r in list_rules(engine)}
    assert json.loads((ws / ".toolgate" / "settings.local.json").read_text())["permissions"]["allow"] == [
        "Bash(make test)"
    ]
    trusted = PermissionEngine(
        ws, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, trust_workspace=True
    )
    assert add_rule(trusted, "Bash(make lint)", "local").warnings == []
