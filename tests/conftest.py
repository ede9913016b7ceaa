"""Fixtures shared by every test: a workspace directory and a runtime bound to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import tests.properties  # noqa: F401  (loads the Hypothesis profile before any property test runs)

from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime


@pytest.fixture(autouse=True)
def _isolated_user_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read (or write) the developer's own user settings; subprocesses inherit this too."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg")))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))  # the sandbox's stand-in record


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
async def runtime(workspace: Path) -> AsyncIterator[Runtime]:
    rt = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(mode=PermissionMode.DEFAULT))
    yield rt
    await rt.aclose()
