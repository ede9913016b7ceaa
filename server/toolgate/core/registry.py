"""Which tools exist, how to find one by name or alias, and the stable order their definitions go out in."""

from __future__ import annotations

from collections.abc import Iterable

from toolgate.core.tool import AnyTool, DescribeContext, ToolDefinition


class ToolRegistry:
    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._by_name: dict[str, AnyTool] = {}
        self._by_alias: dict[str, AnyTool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: AnyTool) -> None:
        for key in (tool.name, *tool.aliases):
            if key in self._by_name or key in self._by_alias:
                raise ValueError(f"two tools claim the name {key!r}")
        self._by_name[tool.name] = tool
        for alias in tool.aliases:
            self._by_alias[alias] = tool

    def remove(self, name: str) -> None:
        """Take a tool (and its aliases) away; nothing happens when no tool has that name."""
        tool = self._by_name.pop(name, None)
        for alias in tool.aliases if tool is not None else ():
            self._by_alias.pop(alias, None)

    def get(self, name: str) -> AnyTool | None:
        return self._by_name.get(name) or self._by_alias.get(name)

    @property
    def names(self) -> list[str]:
        return [tool.name for tool in self.ordered()]

    def ordered(self) -> list[AnyTool]:
        """Built-ins sorted by name as one contiguous block, then external tools sorted by name.

        The definitions are part of the prompt-cache key: the same tools must always go out in the same
        order, and adding an external tool must not move any built-in.
        """
        builtins = sorted((t for t in self._by_name.values() if not t.external), key=lambda t: t.name)
        external = sorted((t for t in self._by_name.values() if t.external), key=lambda t: t.name)
        return [*builtins, *external]

    def definitions(self, ctx: DescribeContext) -> list[ToolDefinition]:
        return [tool.definition(ctx) for tool in self.ordered()]
