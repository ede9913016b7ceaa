"""Fixtures for the file-tool tests: runtimes whose approver allows (or reviews) every call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover


@pytest.fixture
async def rt(workspace: Path) -> AsyncIterator[Runtime]:
    """bypassPermissions: the whole pipeline runs, and nothing asks."""
    runtime = build_runtime(workspace, AllowingApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
    yield runtime
    await runtime.aclose()


@pytest.fixture
def approver() -> AllowingApprover:
    return AllowingApprover()


@pytest.fixture
async def reviewed_rt(workspace: Path, approver: AllowingApprover) -> AsyncIterator[Runtime]:
    """Default mode with edits always reviewed: every write goes through `approver.review`."""
    runtime = build_runtime(workspace, approver, RuntimeOptions(mode=PermissionMode.DEFAULT))
    runtime.session.review_edits = "always"
    yield runtime
    await runtime.aclose()
