"""The built-in tools, one per module, all the same shape (see `toolgate.core.tool.Tool`)."""

from __future__ import annotations

from toolgate.core.tool import AnyTool
from toolgate.tools.read import ReadTool


def builtin_tools() -> list[AnyTool]:
    return [ReadTool()]
