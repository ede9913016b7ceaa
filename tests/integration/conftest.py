"""Fixtures for the integration tests: a bypass-mode runtime, and a real sidecar subprocess with a pytest-lsp client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.integration.sidecar_client import TEST_SERVER, SidecarClient, initialize, start_client, stop_client

from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime


@pytest.fixture
async def rt(workspace: Path) -> AsyncIterator[Runtime]:
    """A runtime in bypassPermissions mode: the tool under test runs, and nothing asks."""
    runtime = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
    yield runtime
    await runtime.aclose()


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    return tmp_path / "storage"


@pytest.fixture
async def sidecar(storage: Path, workspace: Path) -> AsyncIterator[SidecarClient]:
    """An initialized sidecar (with the test tools) whose first workspace folder is `workspace`."""
    client = await start_client(TEST_SERVER)
    try:
        await initialize(client, storage, workspace)
        yield client
    finally:
        await stop_client(client)
