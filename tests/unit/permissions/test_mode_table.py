"""The permission modes' meaning lives in one table (core's MODE_TRAITS): the ladder, coverage and trust read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.unit.permissions.helpers import bash, check, make_runtime

from toolgate.core.permission import MODE_TRAITS, PermissionMode
from toolgate.permissions.sources import load_rule_book

PLAN, DEFAULT = PermissionMode.PLAN, PermissionMode.DEFAULT


def test_the_table_names_every_mode_once() -> None:
    assert list(MODE_TRAITS) == list(PermissionMode)
    assert all(mode is traits.mode for mode, traits in MODE_TRAITS.items())


async def test_what_plan_means_comes_from_the_table(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (workspace / "src").mkdir()
    rt = make_runtime(workspace, mode=PLAN, allow=["Edit(src/**)"])
    assert (await check(rt, "Write", file_path="src/x.py")).decision == "ask"
    # The same mode, no longer read-only in the table: the allow rule counts for a write again.
    monkeypatch.setitem(MODE_TRAITS, PLAN, MODE_TRAITS[PLAN].model_copy(update={"read_only": False}))
    assert (await check(rt, "Write", file_path="src/x.py")).decision == "allow"


async def test_which_modes_are_automatic_comes_from_the_table(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rt = make_runtime(workspace, allow=["Bash(python:*)"])
    assert (await bash(rt, "python -c 'import os'")).decision == "allow"
    monkeypatch.setitem(MODE_TRAITS, DEFAULT, MODE_TRAITS[DEFAULT].model_copy(update={"automatic": True}))
    refused = await bash(rt, "python -c 'import os'")
    assert refused.decision == "ask" and "would let any code run unattended" in refused.reason


def test_which_modes_an_untrusted_workspace_may_choose_comes_from_the_table(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "plan"}}))
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert load_rule_book(workspace, home=tmp_path, environ=environ).default_mode is PLAN
    monkeypatch.setitem(MODE_TRAITS, PLAN, MODE_TRAITS[PLAN].model_copy(update={"widening": True}))
    assert load_rule_book(workspace, home=tmp_path, environ=environ).default_mode is None
