"""ToolOutput and ToolOutputGrep: reading back a result the runner moved into the output store."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.unit.core.tools_for_tests import numbered_lines, oversized_runtime

from toolgate.core.output_store import OUTPUT_STORE
from toolgate.runtime import Runtime
from toolgate.testing import run1


@pytest.fixture
async def rt(tmp_path: Path) -> AsyncIterator[Runtime]:
    runtime = oversized_runtime(tmp_path)
    yield runtime
    await runtime.aclose()


async def test_tooloutput_budget_and_long_lines(rt: Runtime) -> None:
    result = await run1(rt, "Big", text="x" * 100_000)
    ref = re.search(r"stored as (out-[0-9a-f]+)", result.text())
    assert ref is not None
    page = await run1(rt, "ToolOutput", ref=ref.group(1))
    [(number, text)] = numbered_lines(page.text())
    assert number == 1 and text == "x" * 40_000
    assert "100,000 characters long" in page.text()
    past = await run1(rt, "ToolOutput", ref=ref.group(1), offset=5)
    assert "nothing at line 5" in past.text()


async def test_tooloutputgrep_caps_are_announced(rt: Runtime) -> None:
    result = await run1(rt, "Big", text="match me\n", repeat=500)
    ref = re.search(r"stored as (out-[0-9a-f]+)", result.text())
    assert ref is not None
    found = await run1(rt, "ToolOutputGrep", ref=ref.group(1), pattern="MATCH", **{"-i": True})
    assert found.text().startswith("1:match me\n2:match me")
    assert "Showing the first 200 of 500 lines (500 matching)" in found.text()
    none = await run1(rt, "ToolOutputGrep", ref=ref.group(1), pattern="absent")
    assert none.text() == f"No line of {ref.group(1)} matches 'absent'."
    bad = await run1(rt, "ToolOutputGrep", ref=ref.group(1), pattern="(")
    assert bad.is_error and 'kind="invalid_input"' in bad.text() and "not a valid regular expression" in bad.text()


async def test_expired_reference_is_explained(rt: Runtime) -> None:
    store = rt.session.deps.get(OUTPUT_STORE)
    store.max_entries = 1
    first = await run1(rt, "Big", text="a" * 2000)
    await run1(rt, "Big", text="b" * 2000)
    ref = re.search(r"stored as (out-[0-9a-f]+)", first.text())
    assert ref is not None
    result = await run1(rt, "ToolOutput", ref=ref.group(1))
    assert result.is_error and 'kind="state"' in result.text() and "expired" in result.text()
