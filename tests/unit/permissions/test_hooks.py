"""PreToolUse / PostToolUse hooks as real shell scripts: allow, deny, ask, exit 2, timeout, bad output, input
rewriting, context for the model, matchers, and how a hook's decision combines with rules and safety."""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.unit.permissions.helpers import fake_tools, make_runtime

from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.core.tool_session import ProgressEvent
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.hooks import hook_digest
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import run1

Factory = Callable[..., Runtime]


def hook(command: str, matcher: str = "*", timeout: float | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        entry["timeout"] = timeout
    return {"matcher": matcher, "hooks": [entry]}


def trust_hooks(settings: dict[str, Any]) -> None:
    """Record every hook of `settings` as reviewed in the user settings file (what `toolgate hooks trust` does)."""
    digests = [
        hook_digest(event, entry["matcher"].strip(), command["command"])
        for event, entries in settings.get("hooks", {}).items()
        for entry in entries
        for command in entry["hooks"]
    ]
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "settings.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text(json.dumps({"trustedHooks": digests}))


def answer(obj: dict[str, Any]) -> str:
    """A hook that reads its input and prints `obj` as its answer."""
    return f"cat >/dev/null; printf '%s' '{json.dumps(obj)}'"


@pytest.fixture
async def with_hooks(workspace: Path) -> AsyncIterator[Callable[..., tuple[Runtime, list[ProgressEvent]]]]:
    made: list[Runtime] = []
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")

    def factory(
        pre: list[dict[str, Any]] = (), post: list[dict[str, Any]] = (), **kwargs: Any
    ) -> tuple[Runtime, list[ProgressEvent]]:
        settings = workspace / ".toolgate" / "settings.json"
        settings.parent.mkdir(exist_ok=True)
        configured = {"hooks": {"PreToolUse": list(pre), "PostToolUse": list(post)}}
        settings.write_text(json.dumps(configured))
        kwargs.setdefault("trust_workspace", True)  # a project's hooks run only in a trusted workspace ...
        trust_hooks(configured)  # ... and only once their content is trusted
        rt = make_runtime(workspace, read_settings=True, **kwargs)
        events: list[ProgressEvent] = []
        rt.session.progress.add(events.append)
        made.append(rt)
        return rt, events

    yield factory
    for rt in made:
        await rt.aclose()


async def test_a_hook_allow_replaces_the_generic_ask(with_hooks: Callable[..., Any]) -> None:
    rt, _ = with_hooks(pre=[hook(answer({"decision": "allow", "reason": "gadgets are fine"}), "Gadget")])
    result = await run1(rt, "Gadget")
    assert not result.is_error and result.content == "Gadget ran"


async def test_a_hook_allow_never_beats_a_deny_rule_or_a_safety_check(with_hooks: Callable[..., Any]) -> None:
    allow = hook(answer({"decision": "allow"}))
    rt, _ = with_hooks(pre=[allow], deny=["Gadget"], ask=["Read(b.txt)"], mode=PermissionMode.BYPASS)
    denied = await run1(rt, "Gadget")
    assert denied.is_error and "denied by the rule `Gadget`" in denied.text()
    protected = await run1(rt, "Write", file_path=".git/config")
    assert protected.is_error and "needs approval" in protected.text() and ".git" in protected.text()
    asked = await run1(rt, "Read", file_path="b.txt")
    assert asked.is_error and "Read(b.txt)" in asked.text()


async def test_a_hook_deny_blocks_with_its_reason(with_hooks: Callable[..., Any]) -> None:
    rt, _ = with_hooks(pre=[hook(answer({"decision": "deny", "reason": "not on Fridays"}), "Read")])
    result = await run1(rt, "Read", file_path="a.txt")
    assert result.is_error and "Permission denied: not on Fridays" in result.text()


async def test_exit_2_blocks_with_stderr(with_hooks: Callable[..., Any]) -> None:
    rt, _ = with_hooks(pre=[hook("cat >/dev/null; echo 'policy says no' >&2; exit 2", "Read")])
    result = await run1(rt, "Read", file_path="a.txt")
    blocker = "cat >/dev/null; echo 'policy says no' >&2; exit 2"
    assert result.is_error and f"Permission denied: policy says no (decided by the PreToolUse hook `{blocker}`" in (
        result.text()
    )


async def test_a_hook_ask_turns_an_allow_into_a_question(with_hooks: Callable[..., Any]) -> None:
    rt, _ = with_hooks(pre=[hook(answer({"decision": "ask", "reason": "double-check reads"}), "Read")])
    result = await run1(rt, "Read", file_path="a.txt")
    assert result.is_error and "double-check reads" in result.text() and "non-interactive" in result.text()


async def test_deny_beats_ask_beats_allow_across_hooks(with_hooks: Callable[..., Any]) -> None:
    rt, _ = with_hooks(
        pre=[
            hook(answer({"decision": "allow"})),
            hook(answer({"decision": "deny", "reason": "second says no"})),
            hook(answer({"decision": "ask", "reason": "third asks"})),
        ]
    )
    result = await run1(rt, "Gadget")
    assert "second says no" in result.text() and "third asks" not in result.text()
    rt2, _ = with_hooks(pre=[hook(answer({"decision": "allow"})), hook(answer({"decision": "ask", "reason": "hm"}))])
    assert "hm" in (await run1(rt2, "Read", file_path="a.txt")).text()


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("cat >/dev/null; printf '{not json'", "not a valid hook answer"),
        ("cat >/dev/null; printf '%s' '{\"decison\": \"allow\"}'", "not a valid hook answer"),
        ("cat >/dev/null; printf '%s' '{\"decision\": \"maybe\"}'", "not a valid hook answer"),
        ("cat >/dev/null; echo broken >&2; exit 1", "failed with exit status 1: broken"),
        ("/nonexistent/hook-binary", "failed with exit status 127"),
    ],
)
async def test_a_failing_hook_is_reported_and_has_no_say(
    with_hooks: Callable[..., Any], command: str, problem: str
) -> None:
    rt, events = with_hooks(pre=[hook(command)])
    assert not (await run1(rt, "Read", file_path="a.txt")).is_error  # the ladder alone decides: allowed
    assert (await run1(rt, "Gadget")).is_error  # ... and here: asked, so refused headless
    reports = [e.text for e in events if e.kind == "hook_problem"]
    assert reports and all(problem in r for r in reports), reports


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return any(line.startswith("State:") and "Z" in line for line in handle)
    except FileNotFoundError:
        return True


def _wait_gone(pid: int, deadline: float) -> bool:
    """The process was killed; wait (with a deadline) for the kernel to finish it off."""
    end = time.monotonic() + deadline
    while not _gone(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


async def test_a_hook_that_times_out_is_stopped_with_everything_it_started(
    with_hooks: Callable[..., Any], tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    rt, events = with_hooks(pre=[hook(command, timeout=1)])
    started = time.monotonic()
    result = await run1(rt, "Read", file_path="a.txt")
    assert not result.is_error and time.monotonic() - started < 30
    assert any("did not finish within 1 s" in e.text for e in events if e.kind == "hook_problem")
    assert _wait_gone(int(pid_file.read_text()), deadline=10)


async def test_hooks_see_the_call_on_stdin(with_hooks: Callable[..., Any], tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    rt, _ = with_hooks(pre=[hook(f"cat > {seen}", "Read")], mode=PermissionMode.ACCEPT_EDITS)
    result = await run1(rt, "Read", file_path="a.txt")
    payload = json.loads(seen.read_text())
    assert payload == {
        "hook_event_name": "PreToolUse",
        "event": "PreToolUse",
        "session_id": rt.session.id,
        "transcript_path": None,  # a session without a directory keeps no transcript
        "cwd": str(rt.session.cwd),
        "permission_mode": "acceptEdits",
        "tool_name": "Read",
        "tool_input": {"file_path": "a.txt"},
        "tool_use_id": result.tool_use_id,
    }


async def test_updated_input_is_checked_and_used(with_hooks: Callable[..., Any]) -> None:
    redirect = answer({"updated_input": {"file_path": "b.txt"}})
    rt, _ = with_hooks(pre=[hook(redirect, "Read")])
    result = await run1(rt, "Read", file_path="a.txt")
    assert result.content == "1\tbeta"
    escape = answer({"updated_input": {"file_path": "/etc/hostname"}})
    rt2, _ = with_hooks(pre=[hook(escape, "Read")])
    refused = await run1(rt2, "Read", file_path="a.txt")
    assert refused.is_error and "/etc/hostname" in refused.text()  # the rewritten call went through the ladder
    bad = answer({"updated_input": {"path": "b.txt"}})
    rt3, events = with_hooks(pre=[hook(bad, "Read")])
    assert (await run1(rt3, "Read", file_path="a.txt")).content == "1\talpha"
    assert any("does not fit Read's input" in e.text for e in events)


async def test_context_for_the_model(with_hooks: Callable[..., Any], tmp_path: Path) -> None:
    seen = tmp_path / "post.json"
    rt, _ = with_hooks(
        pre=[hook(answer({"additional_context": "remember the style guide"}), "Read")],
        post=[
            hook(f"tee {seen} >/dev/null; printf '%s' '{json.dumps({'additional_context': 'lint passed'})}'", "Read"),
            hook("cat >/dev/null; echo 'that file is generated' >&2; exit 2", "Read"),
        ],
    )
    result = await run1(rt, "Read", file_path="a.txt")
    text = result.text()
    assert text.startswith("1\talpha")
    assert "[hook] remember the style guide" in text and "[hook] lint passed" in text
    assert "[hook] A hook objected after the call: that file is generated" in text
    post = json.loads(seen.read_text())
    assert post["event"] == "PostToolUse" and post["tool_result"] == {"content": "1\talpha", "is_error": False}


@pytest.mark.parametrize(
    ("matcher", "runs_for"),
    [
        ("Read", {"Read"}),
        ("Read|Grep", {"Read", "Grep"}),
        ("Gr.*", {"Grep"}),
        ("*", {"Read", "Grep", "Gadget"}),
        ("", {"Read", "Grep", "Gadget"}),
        ("Widget", {"Gadget"}),  # an alias counts
        ("ead", set()),  # a regular expression must match the whole name
    ],
)
async def test_matchers(with_hooks: Callable[..., Any], tmp_path: Path, matcher: str, runs_for: set[str]) -> None:
    log = tmp_path / "log.txt"
    rt, _ = with_hooks(pre=[hook(f"cat >/dev/null; echo run >> {log}", matcher)], mode=PermissionMode.BYPASS)
    ran = set()
    for name, tool_input in [("Read", {"file_path": "a.txt"}), ("Grep", {"pattern": "x"}), ("Gadget", {})]:
        before = log.read_text() if log.exists() else ""
        await run1(rt, name, **tool_input)
        if (log.read_text() if log.exists() else "") != before:
            ran.add(name)
    assert ran == runs_for


async def test_an_invalid_matcher_is_reported(with_hooks: Callable[..., Any]) -> None:
    rt, _ = with_hooks(pre=[hook("exit 2", "(")])
    assert any("not a valid regular expression" in p for p in rt.permissions.problems)
    assert not (await run1(rt, "Read", file_path="a.txt")).is_error


async def test_permission_check_never_runs_hooks(with_hooks: Callable[..., Any], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    rt, _ = with_hooks(pre=[hook(f"touch {marker}; exit 2")])
    result = await rt.check("Read", {"file_path": "a.txt"})
    assert result.decision == "allow" and not marker.exists()
    assert os.listdir(tmp_path).count("ran") == 0


async def test_only_the_users_own_hooks_get_the_secrets_named_in_env_pass_through(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    user_file = home / ".config" / "toolgate" / "settings.json"
    user_file.parent.mkdir(parents=True)
    seen_by_user, seen_by_project = tmp_path / "user.env", tmp_path / "project.env"
    dump = 'cat >/dev/null; printf "%s|%s" "${{GH_TOKEN-unset}}" "${{OPENAI_API_KEY-unset}}" > {}'
    user_file.write_text(
        json.dumps(
            {
                "env": {"passThrough": ["GH_TOKEN"]},
                "hooks": {"PreToolUse": [hook(dump.format(seen_by_user), "Read")]},
            }
        )
    )
    project_file = workspace / ".toolgate" / "settings.json"
    project_file.parent.mkdir()
    project_file.write_text(json.dumps({"hooks": {"PreToolUse": [hook(dump.format(seen_by_project), "Read")]}}))
    reviewed = hook_digest("PreToolUse", "Read", dump.format(seen_by_project))
    user_file.write_text(json.dumps({**json.loads(user_file.read_text()), "trustedHooks": [reviewed]}))
    (workspace / "a.txt").write_text("alpha\n")
    environ = {**os.environ, "HOME": str(home), "GH_TOKEN": "ghp-for-the-user", "OPENAI_API_KEY": "sk-never"}
    environ.pop("XDG_CONFIG_HOME", None)
    engine = PermissionEngine(workspace, home=home, environ=environ, trust_workspace=True)
    options = RuntimeOptions(mode=PermissionMode.ACCEPT_EDITS, policy=engine, tools=fake_tools())
    rt = build_runtime(workspace, NonInteractiveApprover(), options)
    try:
        await run1(rt, "Read", file_path="a.txt")
    finally:
        await rt.aclose()
    assert seen_by_user.read_text() == "ghp-for-the-user|unset"  # named by the user: passed; the rest: scrubbed
    assert seen_by_project.read_text() == "unset|unset"  # the workspace wrote this hook: no secrets at all


async def test_hooks_edited_by_hand_apply_from_the_next_call(
    with_hooks: Callable[..., Any], workspace: Path, tmp_path: Path
) -> None:
    # Which hooks match a tool is remembered between calls; a settings file edited by hand must still count.
    log = tmp_path / "log.txt"
    rt, _ = with_hooks(pre=[hook(f"cat >/dev/null; echo grep >> {log}", "Grep")], mode=PermissionMode.BYPASS)
    await run1(rt, "Read", file_path="a.txt")
    assert not log.exists()  # no hook for Read, so nothing ran
    settings = workspace / ".toolgate" / "settings.json"
    configured = {"hooks": {"PreToolUse": [hook(f"cat >/dev/null; echo read >> {log}", "Read")]}}
    settings.write_text(json.dumps(configured))
    await run1(rt, "Read", file_path="a.txt")
    assert not log.exists()  # a hook added by hand is new: it waits for review
    trust_hooks(configured)
    await run1(rt, "Read", file_path="a.txt")
    assert log.read_text() == "read\n"
    settings.write_text(json.dumps({"hooks": {"PreToolUse": []}}))
    await run1(rt, "Read", file_path="a.txt")
    assert log.read_text() == "read\n"
