"""Which tools exist, how to find one by name or alias, and the stable order their definitions go out in."""

from __future__ import annotations

from collections.abc import Iterable

from toolgate.core.tool import AnyTool, DescribeContext, ToolDefinition


class ToolRegistry:
    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._by_name: dict[str, AnyTool] = {}
        self._by_alias: dict[str, AnyTool] = {}
        # The order and the names, computed once per change of the tool set: the runner asks for them on
        # every call (the result spill names the reader tools present), and sorting every tool each time
        # was a measurable part of a call's cost.
        self._ordered: tuple[AnyTool, ...] | None = None
        self._name_set: frozenset[str] | None = None
        for tool in tools:
            self.add(tool)

    def add(self, tool: AnyTool) -> None:
        for key in (tool.name, *tool.aliases):
            if key in self._by_name or key in self._by_alias:
                raise ValueError(f"two tools claim the name {key!r}")
        self._by_name[tool.name] = tool
        for alias in tool.aliases:
            self._by_alias[alias] = tool
        self._changed()

    def remove(self, name: str) -> None:
        """Take a tool (and its aliases) away; nothing happens when no tool has that name."""
        tool = self._by_name.pop(name, None)
        for alias in tool.aliases if tool is not None else ():
            self._by_alias.pop(alias, None)
        self._changed()

    def _changed(self) -> None:
        self._ordered = None
        self._name_set = None

    def get(self, name: str) -> AnyTool | None:
        return self._by_name.get(name) or self._by_alias.get(name)

    @property
    def names(self) -> list[str]:
        return [tool.name for tool in self._in_order()]

    @property
    def name_set(self) -> frozenset[str]:
        """The tools' names (not aliases), for membership tests; cached until the tool set changes."""
        if self._name_set is None:
            self._name_set = frozenset(self._by_name)
        return self._name_set

    def ordered(self) -> list[AnyTool]:
        """Built-ins sorted by name as one contiguous block, then external tools sorted by name.

        The definitions are part of the prompt-cache key: the same tools must always go out in the same
        order, and adding an external tool must not move any built-in.
        """
        return list(self._in_order())

    def _in_order(self) -> tuple[AnyTool, ...]:
        if self._ordered is None:
            builtins = sorted((t for t in self._by_name.values() if not t.external), key=lambda t: t.name)
            external = sorted((t for t in self._by_name.values() if t.external), key=lambda t: t.name)
            self._ordered = (*builtins, *external)
        return self._ordered

    def definitions(self, ctx: DescribeContext) -> list[ToolDefinition]:
        return [tool.definition(ctx) for tool in self.ordered()]
