"""Tool traits: declared once on the class, read by the runner's questions; the defaults fail closed."""

from __future__ import annotations

import pytest
from tests.unit.core.tools_for_tests import BareInput, BareTool, EchoInput, EchoTool

from toolgate.core.tool import ToolTraits


def test_a_tool_that_declares_nothing_writes_runs_alone_may_destroy_and_reaches_out() -> None:
    bare = BareTool()
    assert bare.is_read_only(BareInput()) is False
    assert bare.is_concurrency_safe(BareInput()) is False
    assert bare.is_destructive(BareInput()) is True
    assert bare.traits.idempotent is False and bare.traits.open_world is True


def test_declared_traits_answer_the_questions_about_the_arguments() -> None:
    echo = EchoTool()
    assert echo.is_read_only(EchoInput()) and echo.is_concurrency_safe(EchoInput())
    assert echo.is_destructive(EchoInput()) is False
    quiet = type("Quiet", (BareTool,), {"traits": ToolTraits(concurrency_safe=True, destructive=False)})()
    assert quiet.is_concurrency_safe(BareInput()) and not quiet.is_read_only(BareInput())


def test_a_tool_cannot_be_declared_read_only_and_destructive() -> None:
    with pytest.raises(ValueError, match="only reads"):
        ToolTraits(read_only=True)
