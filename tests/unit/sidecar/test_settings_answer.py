"""The settings answer (`toolgate/settings/get`): files, problems and rule positions as structure, not prose."""

from __future__ import annotations

from pathlib import Path

from toolgate.core.permission import PermissionMode
from toolgate.permissions.decide import PermissionEngine
from toolgate.sidecar.protocol import SettingsProblem
from toolgate.sidecar.settings_answer import settings_answer


def test_the_settings_answer_sends_files_problems_and_positions_as_structure(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    project = workspace / ".toolgate" / "settings.json"
    project.parent.mkdir(parents=True)
    project.write_text('{"permissions": {"deny": ["Read(./.env)", "Bash("],\n "allow": ["Bash(ls)"]}}')
    flag = tmp_path / "ci.json"
    flag.write_text('{"hooks": {"PreToolUse": [{"matcher": "Bash[", "hooks": []}]}}')
    engine = PermissionEngine(
        workspace,
        home=home,
        environ={"XDG_CONFIG_HOME": str(home / "xdg")},
        cli_rules={"allow": ["Bash(git:*)"]},
        settings_files=[flag],
        trust_workspace=True,
    )
    answer = settings_answer(engine, "s1", PermissionMode.DEFAULT, "when_asking")
    assert answer.settings_files == {
        "local": str(workspace / ".toolgate" / "settings.local.json"),
        "project": str(project),
        "user": str(home / "xdg" / "toolgate" / "settings.json"),
    }
    assert answer.flag_files == [str(flag)]
    places = {(r.behavior, r.rule): (r.file, r.line, r.column) for r in answer.rules}
    assert places == {
        ("deny", "Read(./.env)"): (str(project), 1, 27),
        ("allow", "Bash(ls)"): (str(project), 2, 12),
        ("allow", "Bash(git:*)"): (None, None, None),  # the command line has no file
    }
    assert answer.problems == [
        SettingsProblem(file=str(project), line=1, column=43, rule="Bash(", message=engine.problems[0]),
        SettingsProblem(file=str(flag), line=None, column=None, rule=None, message=engine.problems[1]),
    ]
    assert "'Bash(' is not a valid rule" in engine.problems[0]
    assert engine.problems[1].startswith(f"flag ({flag}): the PreToolUse matcher 'Bash['")


def test_the_sandbox_state_goes_with_the_settings(tmp_path: Path) -> None:
    from toolgate.sandbox.runtime import SandboxState

    engine = PermissionEngine(tmp_path, home=tmp_path / "home", environ={})
    on = SandboxState(True, True, "bubblewrap", "/usr/bin/bwrap", ("Network(domain:pypi.org)",))
    answer = settings_answer(engine, "s1", PermissionMode.DEFAULT, "when_asking", on)
    assert answer.sandbox is not None
    assert (answer.sandbox.state, answer.sandbox.auto_allow, answer.sandbox.network) == (
        "on",
        True,
        ["Network(domain:pypi.org)"],
    )
    assert "through its proxy to Network(domain:pypi.org)" in answer.sandbox.detail
    missing = SandboxState(False, False, "none", "bwrap was not found on PATH", status="unavailable")
    answer = settings_answer(engine, "s1", PermissionMode.DEFAULT, "when_asking", missing)
    assert answer.sandbox is not None and answer.sandbox.state == "unavailable"
    assert answer.sandbox.detail == "bwrap was not found on PATH"
    assert settings_answer(engine, "s1", PermissionMode.DEFAULT, "when_asking").sandbox is None
