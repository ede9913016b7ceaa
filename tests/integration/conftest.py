"""Fixtures for the sidecar integration tests: a real server subprocess and a pytest-lsp client."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

# The tests import the client helpers from this directory (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))

from sidecar_client import TEST_SERVER, SidecarClient, initialize, start_client, stop_client


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
