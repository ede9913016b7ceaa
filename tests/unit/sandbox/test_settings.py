"""Sandbox settings: the user's file sets them, a workspace's files may only tighten them."""

from __future__ import annotations

import json
from pathlib import Path

from toolgate.sandbox.settings import SandboxFileSettings, SandboxRequest, load_sandbox_settings, merge


def layer(**values: object) -> SandboxFileSettings:
    return SandboxFileSettings.model_validate(values)


def test_defaults_are_auto_with_auto_allow() -> None:
    settings, ignored = merge({})
    assert (settings.enabled, settings.auto_allow, ignored) == ("auto", True, [])


def test_the_user_may_turn_it_off_and_add_writable_paths() -> None:
    settings, _ = merge({"user": layer(enabled="off", autoAllow=False, writable=["~/cache"])})
    assert (settings.enabled, settings.auto_allow, settings.writable) == ("off", False, ["~/cache"])


def test_a_workspace_may_tighten_but_never_loosen() -> None:
    settings, ignored = merge(
        {
            "user": layer(enabled="auto", autoAllow=False),
            "project": layer(enabled="off", autoAllow=True, writable=["/"], hidden=["secrets"]),
            "local": layer(enabled="on"),
        }
    )
    assert settings.enabled == "on"
    assert settings.auto_allow is False
    assert settings.writable == []
    assert settings.hidden == ["secrets"]
    assert len(ignored) == 3 and all("loosen" in i or "user's settings file only" in i for i in ignored)


def test_a_workspace_may_turn_auto_allow_off() -> None:
    settings, ignored = merge({"project": layer(autoAllow=False)})
    assert settings.auto_allow is False and ignored == []


def test_files_are_read_and_the_command_line_wins_over_them(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"sandbox": {"enabled": "off", "hidden": ["/x"]}}))
    settings, problems = load_sandbox_settings({"user": user}, (), None)
    assert (settings.enabled, settings.hidden, problems) == ("off", ["/x"], [])
    settings, _ = load_sandbox_settings({"user": user}, (), SandboxRequest("on"))
    assert settings.enabled == "on"


def test_a_bad_sandbox_entry_is_reported_and_ignored_not_fatal(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"sandbox": {"enabled": "sometimes", "autoAllow": False}}))
    settings, problems = load_sandbox_settings({"user": user, "project": tmp_path / "missing.json"}, (), None)
    assert settings.enabled == "auto" and settings.auto_allow is True  # the whole object is ignored
    assert len(problems) == 1 and "sandbox.enabled" in problems[0] and str(user) in problems[0]
    assert json.loads(user.read_text())["sandbox"]["enabled"] == "sometimes"  # the file is left alone


def test_the_builders_default_applies_only_when_no_file_says(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    settings, _ = load_sandbox_settings({"user": user}, (), SandboxRequest(default="off"))
    assert settings.enabled == "off"  # a builder whose default is off, and no file that says
    user.write_text(json.dumps({"sandbox": {"enabled": "auto"}}))
    settings, _ = load_sandbox_settings({"user": user}, (), SandboxRequest(default="off"))
    assert settings.enabled == "auto"


def test_network_rules_come_from_the_user_only_and_unusable_ones_are_reported() -> None:
    settings, ignored = merge(
        {
            "user": layer(network=["Network(domain:pypi.org)", "pypi.org"]),
            "flag": layer(network=["Network(domain:*.npmjs.org)"]),
            "project": layer(network=["Network(domain:evil.test)"]),
        }
    )
    assert settings.network == ["Network(domain:pypi.org)", "Network(domain:*.npmjs.org)"]
    assert any("'pypi.org' is not a network rule" in i for i in ignored)
    assert any("project settings' sandbox.network is read from the user's settings file only" in i for i in ignored)
