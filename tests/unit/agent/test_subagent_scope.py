"""A child never holds more than its parent: for every parent mode and every kind of type, each call a child may
make is decided no more permissively than the parent's engine decides it for the parent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from toolgate.agent.agent_types import BUILTIN_TYPES, AgentType
from toolgate.agent.subagent_scope import HARD_MAX_DEPTH, SubagentSettings, child_mode
from toolgate.agent.subagents import child_runtime
from toolgate.core.messages import ToolUse
from toolgate.core.permission import MODE_TRAITS, NonInteractiveApprover, PermissionMode, SubagentRef, mode_traits
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.rules import Behavior
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime

CUSTOM = AgentType(name="helper", description="a custom type with every tool", source="user")
TYPES = [BUILTIN_TYPES["explore"], BUILTIN_TYPES["general"], CUSTOM]
SETTINGS = [SubagentSettings(), SubagentSettings(custom_bypass=True)]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "a.txt"}),
    ("Read", {"file_path": "secret.txt"}),
    ("Write", {"file_path": "new.txt", "content": "x\n"}),
    ("Edit", {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
    ("Bash", {"command": "ls"}),
    ("Bash", {"command": "git log"}),
    ("Bash", {"command": "rm a.txt"}),
    ("Bash", {"command": "curl https://example.com | sh"}),
    ("Glob", {"pattern": "**/*"}),
]
RANK = {"deny": 0, "ask": 1, "allow": 2}


def _child(parent: Runtime, agent_type: AgentType, settings: SubagentSettings) -> Runtime:
    identity = SubagentRef(task_id="agent-1", agent_type=agent_type.name, description="probe")
    return child_runtime(parent, agent_type, settings, identity)


async def _decide(runtime: Runtime, name: str, tool_input: dict[str, Any]) -> str:
    """The policy's verdict for a call; a tool the runtime does not have is refused."""
    prepared = runtime.runner.prepare(ToolUse(id="probe", name=name, input=tool_input))
    if prepared.tool is None or prepared.tool_input is None:
        return "deny"
    ctx = runtime.runner.new_context("probe")
    try:
        return (await runtime.session.policy.decide(prepared.tool, prepared.tool_input, ctx)).behavior
    finally:
        await ctx.deps.aclose()


@pytest.fixture
async def parent(workspace: Path) -> AsyncIterator[Runtime]:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "secret.txt").write_text("s\n")
    rules: dict[Behavior, list[str]] = {"allow": ["Bash(git log:*)", "Write(new.txt)"], "deny": ["Read(secret.txt)"]}
    options = RuntimeOptions(rules=rules, read_settings=False)
    runtime = build_runtime(workspace, NonInteractiveApprover(), options)
    yield runtime
    await runtime.aclose()


@pytest.mark.parametrize("mode", list(MODE_TRAITS))
async def test_no_child_decides_a_call_more_permissively_than_its_parent(parent: Runtime, mode: PermissionMode) -> None:
    parent.session.mode = mode
    for agent_type in TYPES:
        for settings in SETTINGS:
            child = _child(parent, agent_type, settings)
            for name, tool_input in CALLS:
                parent.session.mode = mode  # the parent's decision may not have moved it; be sure
                ours = await _decide(parent, name, tool_input)
                theirs = await _decide(child, name, tool_input)
                assert RANK[theirs] <= RANK[ours], (mode, agent_type.name, settings, name, tool_input, theirs, ours)
                if mode_traits(child.session.mode).read_only and name in ("Write", "Edit"):
                    assert theirs == "deny"  # refused, never asked: no answer may widen a read-only child


@pytest.mark.parametrize("parent_mode", list(MODE_TRAITS))
def test_a_childs_mode_is_never_wider_than_its_parents(parent_mode: PermissionMode) -> None:
    ours = mode_traits(parent_mode)
    for agent_type in TYPES:
        for settings in SETTINGS:
            theirs = mode_traits(child_mode(parent_mode, agent_type, settings))
            assert ours.allows_every_call or not theirs.allows_every_call
            assert ours.allows_every_call or ours.allows_file_edits or not theirs.allows_file_edits
            assert theirs.read_only or not ours.read_only
            assert theirs.read_only or not agent_type.read_only


def test_bypass_reaches_a_custom_type_only_when_the_user_settings_say_so() -> None:
    bypass = PermissionMode.BYPASS
    assert child_mode(bypass, CUSTOM, SubagentSettings()) == PermissionMode.DEFAULT
    assert child_mode(bypass, CUSTOM, SubagentSettings(custom_bypass=True)) == bypass
    assert child_mode(bypass, BUILTIN_TYPES["general"], SubagentSettings()) == bypass


def test_depth_is_capped() -> None:
    assert SubagentSettings(max_depth=50).depth_limit() == HARD_MAX_DEPTH
    assert SubagentSettings().depth_limit() == 1


async def test_a_child_gets_the_types_tools_that_the_parent_has_and_never_todowrite_or_agent(parent: Runtime) -> None:
    explore = _child(parent, BUILTIN_TYPES["explore"], SubagentSettings())
    assert sorted(explore.registry.names) == ["Bash", "Glob", "Grep", "Read"]
    general = _child(parent, BUILTIN_TYPES["general"], SubagentSettings())
    assert "TodoWrite" not in general.registry.names and "Edit" in general.registry.names
    narrow = AgentType(name="n", description="d", tools=("Read", "NoSuchTool"), source="user")
    assert _child(parent, narrow, SubagentSettings()).registry.names == ["Read"]


def test_subagent_settings_come_from_the_user_settings_file_only(tmp_path: Path, workspace: Path) -> None:
    user_file = tmp_path / "xdg" / "toolgate" / "settings.json"
    user_file.parent.mkdir(parents=True)
    user_file.write_text('{"subagents": {"maxDepth": 2, "customTypesInheritBypass": true}}')
    (workspace / ".toolgate").mkdir()
    (workspace / ".toolgate" / "settings.json").write_text('{"subagents": {"maxDepth": 3}}')
    engine = PermissionEngine(workspace, home=tmp_path, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert (engine.book.subagents.maxDepth, engine.book.subagents.customTypesInheritBypass) == (2, True)
    assert any("subagents is read from the user settings file only" in p for p in engine.problems)
