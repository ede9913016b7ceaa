"""The hook events beyond PreToolUse/PostToolUse at the engine: PermissionRequest and PostToolUseFailure, what an
event does not take, the output cap, the schema, and the listing of every hook with its trust state."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.unit.permissions.helpers import make_runtime

from toolgate.core.tool_session import ProgressEvent
from toolgate.permissions.hooks import HOOK_EVENTS
from toolgate.permissions.hooks.process import MAX_OUTPUT_BYTES
from toolgate.permissions.hooks.review import list_hooks, revoke_mutation, trust_mutation
from toolgate.permissions.settings import HooksSettings, read_settings, update_settings
from toolgate.permissions.sources import load_rule_book
from toolgate.runtime import Runtime
from toolgate.testing import run1

USER_FILE = "toolgate/settings.json"


def user_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / USER_FILE


def configured(hooks: dict[str, tuple[str, str]]) -> dict[str, Any]:
    return {"hooks": {e: [{"matcher": m, "hooks": [{"type": "command", "command": c}]}] for e, (m, c) in hooks.items()}}


@pytest.fixture
async def with_user_hooks(workspace: Path) -> AsyncIterator[Callable[..., tuple[Runtime, list[ProgressEvent]]]]:
    made: list[Runtime] = []
    (workspace / "a.txt").write_text("alpha\n")

    def factory(hooks: dict[str, tuple[str, str]], **kwargs: Any) -> tuple[Runtime, list[ProgressEvent]]:
        user_file().parent.mkdir(parents=True, exist_ok=True)
        user_file().write_text(json.dumps(configured(hooks)))
        rt = make_runtime(workspace, read_settings=True, **kwargs)
        events: list[ProgressEvent] = []
        rt.session.progress.add(events.append)
        made.append(rt)
        return rt, events

    yield factory
    for rt in made:
        await rt.aclose()


def problems(events: list[ProgressEvent]) -> list[str]:
    return [e.text for e in events if e.kind == "hook_problem"]


async def test_a_permission_request_hook_answers_asks_only(with_user_hooks: Callable[..., Any], tmp_path: Path) -> None:
    log = tmp_path / "asked.log"
    deny = f'cat >> {log}; echo >> {log}; printf \'%s\' \'{{"decision": "deny", "reason": "not today"}}\''
    rt, _ = with_user_hooks({"PermissionRequest": ("*", deny)})
    assert (await run1(rt, "Read", file_path="a.txt")).content == "1\talpha"  # allowed: nobody is asked
    refused = await run1(rt, "Gadget")
    assert "Permission denied: not today (decided by the PermissionRequest hook `" in refused.text()
    [asked] = [json.loads(line) for line in log.read_text().splitlines() if line]
    assert asked["tool_name"] == "Gadget" and asked["reason"]  # the question it answered in the person's place


async def test_a_decision_the_event_does_not_take_is_reported_and_ignored(
    with_user_hooks: Callable[..., Any],
) -> None:
    rt, events = with_user_hooks({"PostToolUse": ("Read", 'cat >/dev/null; echo \'{"decision": "deny"}\'')})
    assert (await run1(rt, "Read", file_path="a.txt")).content == "1\talpha"
    [problem] = problems(events)
    assert 'answered "decision": "deny", but PostToolUse takes no decision; it was ignored' in problem


async def test_output_over_the_cap_is_cut_and_said(with_user_hooks: Callable[..., Any]) -> None:
    flood = f"cat >/dev/null; head -c {MAX_OUTPUT_BYTES + 4096} /dev/zero | tr '\\0' x"
    rt, events = with_user_hooks({"PreToolUse": ("Read", flood)})
    assert (await run1(rt, "Read", file_path="a.txt")).content == "1\talpha"  # no answer: the ladder decides
    assert any(f"wrote more than {MAX_OUTPUT_BYTES} bytes to stdout; only the first" in p for p in problems(events))


def test_the_settings_schema_has_a_list_for_every_event() -> None:
    assert tuple(HooksSettings.model_fields) == HOOK_EVENTS


def test_every_hook_is_listed_with_its_trust_state(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = workspace / ".toolgate" / "settings.json"
    project.parent.mkdir()
    project.write_text(json.dumps(configured({"Stop": ("", "./verify.sh"), "SessionStart": ("new", "./hello.sh")})))
    user_file().parent.mkdir(parents=True, exist_ok=True)
    user_file().write_text(json.dumps(configured({"Notification": ("", "notify-send toolgate")})))

    def states(trust_workspace: bool | None) -> dict[str, str]:
        book = load_rule_book(workspace, home=home, trust_workspace=trust_workspace)
        return {h.command: h.state for h in list_hooks(book)}

    assert states(None) == {
        "./hello.sh": "workspace_not_trusted",
        "./verify.sh": "workspace_not_trusted",
        "notify-send toolgate": "own",
    }
    assert states(True) == {"./hello.sh": "waiting", "./verify.sh": "waiting", "notify-send toolgate": "own"}
    [verify] = [h for h in list_hooks(load_rule_book(workspace, home=home, trust_workspace=True)) if h.event == "Stop"]
    update_settings(user_file(), trust_mutation([verify.digest]))
    assert states(True)["./verify.sh"] == "trusted" and states(True)["./hello.sh"] == "waiting"
    dropped: list[str] = []
    assert update_settings(user_file(), revoke_mutation(verify.id, dropped)) and dropped == [verify.digest]
    assert states(True)["./verify.sh"] == "waiting"
    saved = read_settings(user_file())
    assert saved is not None and saved.trustedHooks == [] and saved.hooks.Notification  # the rest kept


def test_a_workspace_file_cannot_trust_its_own_hooks(workspace: Path, tmp_path: Path) -> None:
    project = workspace / ".toolgate" / "settings.json"
    project.parent.mkdir()
    hooks = configured({"Stop": ("", "./verify.sh")})
    project.write_text(json.dumps(hooks))
    [hook] = list_hooks(load_rule_book(workspace, home=tmp_path / "home", trust_workspace=True))
    project.write_text(json.dumps({**hooks, "trustedHooks": [hook.digest]}))
    book = load_rule_book(workspace, home=tmp_path / "home", trust_workspace=True)
    assert [h.state for h in list_hooks(book)] == ["waiting"]
    assert any("trustedHooks is read from the user settings file only" in p.sentence for p in book.problems)
