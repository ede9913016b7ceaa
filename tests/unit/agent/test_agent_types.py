"""Custom subagent types: the strict front-matter parser, and where types are read from (trust)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgate.agent.agent_types import AgentTypeError, load_agent_types, parse_agent_file

GOOD = """---
name: reviewer
description: Reviews a change.
tools: Read, Grep
model: small-model
---
You review code.
"""


def test_a_type_file_gives_its_fields_and_its_body_as_the_prompt(tmp_path: Path) -> None:
    parsed = parse_agent_file(GOOD, tmp_path / "reviewer.md", "user")
    assert (parsed.name, parsed.description, parsed.tools, parsed.model) == (
        "reviewer",
        "Reviews a change.",
        ("Read", "Grep"),
        "small-model",
    )
    assert parsed.prompt == "You review code." and parsed.custom and not parsed.read_only
    no_tools = parse_agent_file(GOOD.replace("tools: Read, Grep\n", ""), tmp_path / "reviewer.md", "user")
    assert no_tools.tools is None  # the parent's tools


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("name: reviewer\n", "must start with a '---' line"),
        ("---\nname: reviewer\n", "no closing '---'"),
        (GOOD.replace("model:", "color:"), "reviewer.md:5: expected 'key: value'"),
        (GOOD.replace("model: small-model", "name: reviewer"), "name is given twice"),
        (GOOD.replace("name: reviewer", "name: other"), "must be the file's name, 'reviewer'"),
        (GOOD.replace("description: Reviews a change.", "description:"), "description"),
    ],
)
def test_a_broken_type_file_is_refused_with_the_place_and_the_fix(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(AgentTypeError) as caught:
        parse_agent_file(text, tmp_path / "reviewer.md", "user")
    assert words in str(caught.value) and str(tmp_path / "reviewer.md") in str(caught.value)


def test_workspace_types_are_read_only_when_the_workspace_is_trusted(tmp_path: Path) -> None:
    user_dir, workspace = tmp_path / "user", tmp_path / "ws"
    user_dir.mkdir()
    (workspace / ".toolgate" / "agents").mkdir(parents=True)
    (user_dir / "reviewer.md").write_text(GOOD)
    (workspace / ".toolgate" / "agents" / "tester.md").write_text(
        GOOD.replace("reviewer", "tester").replace("Reviews", "Tests")
    )
    (workspace / ".toolgate" / "agents" / "explore.md").write_text(GOOD.replace("reviewer", "explore"))
    untrusted = load_agent_types(workspace, trusted=False, user_dir=user_dir)
    assert sorted(untrusted.types) == ["explore", "general", "reviewer"] and untrusted.problems == ()
    trusted = load_agent_types(workspace, trusted=True, user_dir=user_dir)
    assert sorted(trusted.types) == ["explore", "general", "reviewer", "tester"]
    assert trusted.types["explore"].read_only  # a file cannot replace a built-in type
    [problem] = trusted.problems
    assert "built-in type and cannot be replaced" in problem
