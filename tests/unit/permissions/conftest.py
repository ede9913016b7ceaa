"""Shared fixtures for the permission tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tests.unit.permissions.helpers import make_runtime

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime

RuntimeInMode = Callable[..., Runtime]


@pytest.fixture
async def runtime_in_mode(workspace: Path) -> AsyncIterator[RuntimeInMode]:
    """`runtime_in_mode(mode, allow=[...])`: a runtime on the test's workspace (see `make_runtime`), closed after."""
    made: list[Runtime] = []

    def factory(mode: PermissionMode, **options: Any) -> Runtime:
        rt = make_runtime(workspace, mode=mode, **options)
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.aclose()
