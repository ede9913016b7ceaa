from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.core.tools_for_tests import BareTool, EchoTool, FailTool

from toolgate.core.permission import PermissionMode
from toolgate.core.registry import ToolRegistry
from toolgate.core.tool import DescribeContext


class ExternalTool(EchoTool):
    name = "mcp__a__zeta"
    aliases = ()
    external = True


class ExternalFirst(EchoTool):
    name = "Aardvark"  # sorts before every built-in, but external tools always come after them
    aliases = ()
    external = True


def test_definitions_are_sorted_with_builtins_first_as_one_block() -> None:
    registry = ToolRegistry([ExternalTool(), FailTool(), ExternalFirst(), EchoTool(), BareTool()])
    assert registry.names == ["Bare", "Echo", "Fail", "Aardvark", "mcp__a__zeta"]
    ctx = DescribeContext(frozenset(registry.names), PermissionMode.DEFAULT, Path("/"))
    assert [d.name for d in registry.definitions(ctx)] == registry.names


def test_order_does_not_depend_on_registration_order() -> None:
    a = ToolRegistry([EchoTool(), BareTool(), FailTool()])
    b = ToolRegistry([FailTool(), EchoTool(), BareTool()])
    ctx = DescribeContext(frozenset(a.names), PermissionMode.DEFAULT, Path("/"))
    assert [d.model_dump() for d in a.definitions(ctx)] == [d.model_dump() for d in b.definitions(ctx)]


def test_lookup_by_name_and_alias_and_clashes_are_refused() -> None:
    registry = ToolRegistry([EchoTool()])
    assert registry.get("Echo") is registry.get("Say")
    assert registry.get("echo") is None  # names are exact
    with pytest.raises(ValueError, match="Say"):
        registry.add(type("Clash", (BareTool,), {"name": "Say"})())


def test_names_and_order_follow_every_add_and_remove() -> None:
    # The order and the names are cached between changes of the tool set: each change must show at once.
    registry = ToolRegistry([FailTool(), EchoTool()])
    assert registry.names == ["Echo", "Fail"] and registry.name_set == {"Echo", "Fail"}
    registry.add(ExternalTool())
    registry.add(BareTool())
    assert registry.names == ["Bare", "Echo", "Fail", "mcp__a__zeta"]
    assert registry.name_set == {"Bare", "Echo", "Fail", "mcp__a__zeta"}
    registry.remove("Echo")
    assert registry.names == ["Bare", "Fail", "mcp__a__zeta"] and "Echo" not in registry.name_set
    assert registry.get("Say") is None  # its alias went with it
    registry.ordered().clear()  # a caller's copy: the registry's own order is untouched
    assert [t.name for t in registry.ordered()] == registry.names == ["Bare", "Fail", "mcp__a__zeta"]
