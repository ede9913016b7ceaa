"""Settings files: errors that name the line, writes that keep what they do not change, concurrent writers,
the scopes and their precedence, and keeping the local file out of git."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.unit.permissions.helpers import check, make_runtime

from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.edit_rules import add_rule, list_rules, remove_rule
from toolgate.permissions.rules import RuleError
from toolgate.permissions.settings import (
    SettingsError,
    add_rule_mutation,
    parse_settings,
    read_settings,
    update_settings,
)
from toolgate.permissions.sources import load_rule_book
from toolgate.runtime import RuntimeOptions, build_runtime


def test_invalid_json_names_the_line_and_column(tmp_path: Path) -> None:
    text = '{\n  "permissions": {\n    "allow": ["Bash(ls:*)",]\n  }\n}\n'
    with pytest.raises(SettingsError) as info:
        parse_settings(text, tmp_path / "s.json")
    assert info.value.line == 3
    assert "s.json:3:" in str(info.value) and "not valid JSON" in str(info.value)


def test_schema_errors_name_the_line_of_the_bad_value(tmp_path: Path) -> None:
    text = '{\n  "other": 1,\n  "permissions": {\n    "deny": [],\n    "allow": "Bash(ls:*)"\n  }\n}\n'
    with pytest.raises(SettingsError) as info:
        parse_settings(text, tmp_path / "s.json")
    assert info.value.line == 5 and "permissions.allow" in str(info.value)

    nested = '{"hooks": {"PreToolUse": [\n {"matcher": "Bash",\n  "hooks": [{"command": "x", "timout": 3}]}]}}'
    with pytest.raises(SettingsError) as info:
        parse_settings(nested, tmp_path / "s.json")
    assert info.value.line == 3 and "timout" in str(info.value)

    with pytest.raises(SettingsError, match="one JSON object"):
        parse_settings("[1, 2]", tmp_path / "s.json")
    with pytest.raises(SettingsError, match="defaultMode"):
        parse_settings('{"permissions": {"defaultMode": "yolo"}}', tmp_path / "s.json")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    assert read_settings(tmp_path / "absent.json") is None
    (tmp_path / "empty.json").write_text("")
    empty = read_settings(tmp_path / "empty.json")
    assert empty is not None and empty.permissions.allow == []


def test_writes_keep_unknown_keys_order_and_indentation(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = {
        "$schema": "https://example.invalid/schema.json",
        "theme": {"dark": True, "fonts": ["a", "b"]},
        "permissions": {"deny": ["Bash(rm:*)"], "future": 1, "allow": ["Bash(ls:*)"]},
        "zzz": None,
    }
    path.write_text(json.dumps(original, indent=4) + "\n")
    os.chmod(path, 0o600)

    assert update_settings(path, add_rule_mutation("allow", "Bash(git log:*)")) is True
    text = path.read_text()
    after = json.loads(text)
    assert list(after) == list(original)
    assert list(after["permissions"]) == ["deny", "future", "allow"]
    assert after["permissions"]["allow"] == ["Bash(ls:*)", "Bash(git log:*)"]
    assert after["theme"] == original["theme"] and after["zzz"] is None
    assert '\n    "theme"' in text  # four-space indentation kept
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    # Adding it again changes nothing and does not write.
    mtime = path.stat().st_mtime_ns
    assert update_settings(path, add_rule_mutation("allow", "Bash(git log:*)")) is False
    assert path.stat().st_mtime_ns == mtime


def test_a_symlinked_settings_file_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"permissions": {"allow": []}}\n')
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    assert update_settings(link, add_rule_mutation("allow", "Bash(ls:*)")) is True
    assert link.is_symlink()
    assert json.loads(real.read_text())["permissions"]["allow"] == ["Bash(ls:*)"]


def test_a_new_settings_file_gets_the_mode_the_umask_gives(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        path = tmp_path / "new" / "settings.json"
        assert update_settings(path, add_rule_mutation("allow", "Bash(ls:*)")) is True
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_broken_file_is_reported_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    broken = b'{"permissions": {"allow": ["Bash(ls:*)"\n'
    path.write_bytes(broken)
    with pytest.raises(SettingsError) as info:
        update_settings(path, add_rule_mutation("allow", "Bash(git log:*)"))
    assert info.value.path == path
    assert path.read_bytes() == broken
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temp file left behind


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from toolgate.permissions.settings import add_rule_mutation, update_settings
    path, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    for i in range(count):
        update_settings(path, add_rule_mutation("allow", f"Bash(echo {who}-{i})"))
    """
)


def test_concurrent_writers_lose_no_rule(tmp_path: Path) -> None:
    path = tmp_path / "proj" / ".toolgate" / "settings.local.json"
    writers, each = 4, 15
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), f"w{n}", str(each)], start_new_session=True)
        for n in range(writers)
    ]
    try:
        codes = [p.wait(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert codes == [0] * writers
    rules = json.loads(path.read_text())["permissions"]["allow"]
    assert sorted(rules) == sorted(f"Bash(echo w{n}-{i})" for n in range(writers) for i in range(each))


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_scopes_precedence_roots_and_problems(tmp_path: Path) -> None:
    ws, home, xdg = tmp_path / "ws", tmp_path / "home", tmp_path / "xdg"
    ws.mkdir()
    _write(xdg / "toolgate" / "settings.json", {"permissions": {"allow": ["Read(docs/**)"], "defaultMode": "plan"}})
    _write(ws / ".toolgate" / "settings.json", {"permissions": {"deny": ["Bash(rm:*)", "Bash(oops"]}})
    _write(ws / ".toolgate" / "settings.local.json", {"permissions": {"defaultMode": "acceptEdits"}})
    flag = _write(tmp_path / "ci" / "flags.json", {"permissions": {"allow": ["Edit(out/**)"]}})
    book = load_rule_book(ws, home=home, environ={"XDG_CONFIG_HOME": str(xdg)}, flag_files=[flag], trust_workspace=True)
    by_rule = {e.rule.text: e for e in book.entries}
    assert by_rule["Read(docs/**)"].source.name == "user"
    assert by_rule["Read(docs/**)"].base_forms[0] == ws  # user rules are relative to the open workspace
    assert by_rule["Bash(rm:*)"].source.name == "project"
    assert by_rule["Edit(out/**)"].base_forms[0] == tmp_path / "ci"  # a --settings file: its own directory
    assert book.default_mode is PermissionMode.ACCEPT_EDITS  # local beats user
    [problem] = book.problems
    assert problem.rule == "Bash(oops" and problem.source.name == "project" and "not closed" in problem.message


def test_a_checked_in_file_cannot_switch_to_bypass_even_when_trusted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / ".toolgate" / "settings.json", {"permissions": {"defaultMode": "bypassPermissions"}})
    book = load_rule_book(ws, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, trust_workspace=True)
    assert book.default_mode is None
    assert "bypassPermissions is ignored" in book.problems[0].message


def test_additional_directories_are_relative_to_the_settings_root(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _write(ws / ".toolgate" / "settings.json", {"permissions": {"additionalDirectories": ["../shared", "~/lib"]}})
    book = load_rule_book(
        ws, home=tmp_path / "home", environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, trust_workspace=True
    )
    assert book.additional_dirs == [tmp_path / "shared", tmp_path / "home" / "lib"]


async def test_a_broken_settings_file_makes_allows_ask(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a")
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text('{"permissions": {"deny": ["Read(a.txt)"]')
    rt = make_runtime(workspace, read_settings=True)
    try:
        result = await check(rt, "Read", file_path="a.txt")
        assert result.decision == "ask"
        assert "settings.json" in result.reason and "broken" in result.reason and ":1:" in result.reason
        assert any("not valid JSON" in p for p in rt.permissions.problems)
        denied = make_runtime(workspace, read_settings=True, deny=["Read(a.txt)"])
        assert (await check(denied, "Read", file_path="a.txt")).decision == "deny"  # deny still denies
        await denied.aclose()
    finally:
        await rt.aclose()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


async def test_local_rules_are_kept_out_of_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    ws = repo / "packages" / "app"  # the workspace may be below the repository root
    ws.mkdir(parents=True)
    engine = PermissionEngine(ws, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    change = add_rule(engine, "Bash(make test)", "local")
    assert change.changed and change.file == str(ws / ".toolgate" / "settings.local.json")
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert "/packages/app/.toolgate/settings.local.json" in exclude.splitlines()
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    add_rule(engine, "Bash(make lint)", "local")
    assert exclude == (repo / ".git" / "info" / "exclude").read_text()  # added once

    add_rule(engine, "Bash(make docs)", "project")  # the shared file is not excluded
    assert ".toolgate/settings.json" in _git(repo, "status", "--porcelain", "--untracked-files=all")


def test_a_worktree_excludes_through_its_common_git_dir(tmp_path: Path) -> None:
    from toolgate.permissions.settings import exclude_from_git

    main = tmp_path / "main"
    main.mkdir()
    _git(main, "init", "-q")
    _git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
    _git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    target = tmp_path / "wt" / ".toolgate" / "settings.local.json"
    target.parent.mkdir()
    assert exclude_from_git(target) == main / ".git" / "info" / "exclude"
    target.write_text("{}")
    assert _git(tmp_path / "wt", "status", "--porcelain", "--untracked-files=all") == ""


def test_engine_rule_management(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    engine = PermissionEngine(ws, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    change = add_rule(engine, "Bash(python:*)", "user")
    assert change.file == str(tmp_path / "xdg" / "toolgate" / "settings.json")
    assert change.warnings and "any code" in change.warnings[0]
    assert add_rule(engine, "Bash(git log:*)").warnings == []
    assert add_rule(engine, "Bash(rm:*)", "project", "deny").changed
    listing = {(r.rule, r.behavior, r.source) for r in list_rules(engine)}
    assert listing == {
        ("Bash(python:*)", "allow", "user"),
        ("Bash(git log:*)", "allow", "session"),
        ("Bash(rm:*)", "deny", "project"),
    }
    assert list_rules(engine)[0].rule == "Bash(rm:*)"  # deny first
    assert remove_rule(engine, "Bash(python:*)", "user").changed
    assert not remove_rule(engine, "Bash(python:*)", "user").changed
    assert remove_rule(engine, "Bash(git log:*)").changed
    assert [r.rule for r in list_rules(engine)] == ["Bash(rm:*)"]
    with pytest.raises(RuleError):
        add_rule(engine, "Bash(oops", "local")
    assert not (ws / ".toolgate" / "settings.local.json").exists()


async def test_the_session_mode_decides_and_the_settings_default_mode_feeds_it(workspace: Path) -> None:
    rt = make_runtime(workspace, read_settings=True)
    try:
        assert rt.session.mode is PermissionMode.DEFAULT
        rt.session.mode = PermissionMode.ACCEPT_EDITS  # what the live session's one setter changes
        assert (await check(rt, "Write", file_path="x.txt")).decision == "allow"
    finally:
        await rt.aclose()
    (workspace / ".toolgate").mkdir(exist_ok=True)
    (workspace / ".toolgate" / "settings.local.json").write_text('{"permissions": {"defaultMode": "plan"}}')
    rt = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(trust_workspace=True))
    try:
        assert rt.permissions.book.default_mode is PermissionMode.PLAN
        assert rt.session.mode is PermissionMode.PLAN
    finally:
        await rt.aclose()


async def test_directories_and_read_denials(workspace: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "x.txt").write_text("x")
    rt = make_runtime(workspace, read_settings=True, deny=["Read(./.env)"], ask=["Read(secrets/**)"])
    try:
        assert (await check(rt, "Read", file_path=str(shared / "x.txt"))).decision == "ask"
        assert rt.permissions.read_denied(workspace / ".env") == "Read(./.env)"
        assert rt.permissions.read_denied(workspace / "secrets" / "k.pem") == "Read(secrets/**)"
        assert rt.permissions.read_denied(workspace / "src" / ".env") is None
    finally:
        await rt.aclose()
    (workspace / ".toolgate").mkdir(exist_ok=True)
    settings = {"permissions": {"additionalDirectories": [str(shared)]}}
    (workspace / ".toolgate" / "settings.local.json").write_text(json.dumps(settings))
    rt = make_runtime(workspace, read_settings=True, trust_workspace=True)
    try:
        assert shared in rt.session.working_dirs
        assert (await check(rt, "Read", file_path=str(shared / "x.txt"))).decision == "allow"
    finally:
        await rt.aclose()


async def test_a_settings_file_edited_by_hand_applies_to_the_next_call(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".toolgate").mkdir(parents=True)
    settings = workspace / ".toolgate" / "settings.json"
    settings.write_text('{"permissions": {"allow": [}}')  # broken
    rt = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(trust_workspace=True))
    engine = rt.permissions
    assert engine.problems and "settings.json" in engine.problems[0]
    check = await rt.check("Bash", {"command": "npm test"})
    assert check.decision == "ask"

    settings.write_text('{"permissions": {"allow": ["Bash(npm test)"]}}')  # fixed by hand
    check = await rt.check("Bash", {"command": "npm test"})
    assert check.decision == "allow" and check.rule == "Bash(npm test)"
    assert engine.problems == []
    await rt.aclose()


def test_with_settings_files_off_a_settings_file_is_not_watched(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".toolgate").mkdir(parents=True)
    engine = PermissionEngine(workspace, home=tmp_path, environ={}, read_settings_files=False)
    (workspace / ".toolgate" / "settings.json").write_text('{"permissions": {"deny": ["Bash"]}}')
    assert engine.refresh() is False  # nothing to re-read: the files are not read at all
    assert engine.book.of("deny") == []
    engine_reading = PermissionEngine(workspace, home=tmp_path, environ={}, trust_workspace=True)
    (workspace / ".toolgate" / "settings.json").write_text('{"permissions": {"deny": ["Bash", "Grep"]}}')
    assert engine_reading.refresh() is True and len(engine_reading.book.of("deny")) == 2
    assert engine_reading.refresh() is False  # unchanged since: no re-read


def test_a_settings_file_created_after_the_start_is_noticed(tmp_path: Path) -> None:
    # A missing file is checked more cheaply than an existing one (no failed stat); its appearance still counts.
    workspace = tmp_path / "ws"
    workspace.mkdir()
    engine = PermissionEngine(workspace, home=tmp_path, environ={}, trust_workspace=True)
    assert engine.refresh() is False  # still missing: nothing to re-read
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.local.json").write_text('{"permissions": {"deny": ["Grep"]}}')
    assert engine.refresh() is True and [e.rule.text for e in engine.book.of("deny")] == ["Grep"]
    assert engine.refresh() is False


def test_an_empty_directory_where_a_settings_file_would_be_is_no_file(tmp_path: Path) -> None:
    # The sandbox's stand-in for an absent protected file (.mcp.json, …) is an empty directory: not a broken file.
    from toolgate.permissions.settings import SettingsError, read_settings_text

    stand_in = tmp_path / ".mcp.json"
    stand_in.mkdir()
    assert read_settings_text(stand_in) is None
    (stand_in / "x").write_text("")
    with pytest.raises(SettingsError, match="cannot be read"):
        read_settings_text(stand_in)
