"""The MCP server's tool annotations are the tools' own declared traits, not a second table."""

from __future__ import annotations

from tests.unit.core.tools_for_tests import BareTool

from toolgate.cli.mcp_server import SERVED_TOOLS, annotations_for
from toolgate.core.tool import ToolTraits
from toolgate.tools import builtin_tools


def test_annotations_are_the_traits_the_tool_declares() -> None:
    traits = ToolTraits(destructive=False, idempotent=True, open_world=False)
    tool = type("Counted", (BareTool,), {"name": "Counted", "traits": traits})()
    hints = annotations_for(tool)
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
        False,
        False,
        True,
        False,
    )
    assert annotations_for(BareTool()).destructive_hint is True  # declaring nothing is the fail-closed answer


def test_every_served_tool_declares_its_traits_and_only_bash_answers_per_input() -> None:
    tools = {tool.name: tool for tool in builtin_tools()}
    assert set(SERVED_TOOLS) <= set(tools)
    undeclared = sorted(name for name in SERVED_TOOLS if "traits" not in type(tools[name]).__dict__)
    assert undeclared == []
    overriding = sorted(
        tool.name for tool in tools.values() if {"is_read_only", "is_concurrency_safe"} & set(type(tool).__dict__)
    )
    assert overriding == ["Bash"]
    assert annotations_for(tools["Read"]).read_only_hint is True
    assert annotations_for(tools["Bash"]).open_world_hint is True
    assert annotations_for(tools["BashOutput"]).idempotent_hint is False  # each call hands over new output
