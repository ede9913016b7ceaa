"""Searching must not reveal what a Read deny rule protects, and must say that something was left out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.testing import run1


@pytest.fixture
async def guarded(workspace: Path) -> AsyncIterator[Runtime]:
    (workspace / ".env").write_text("API_TOKEN=s3cret\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "prod.key").write_text("API_TOKEN=k3y\n")
    (workspace / "app.py").write_text("token = env('API_TOKEN')\n")
    rt = build_runtime(
        workspace,
        NonInteractiveApprover(),
        RuntimeOptions(rules={"deny": ["Read(./.env)"], "ask": ["Read(secrets/**)"]}, read_settings=False),
    )
    yield rt
    await rt.aclose()


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_grep_leaves_out_denied_files_and_says_so(guarded: Runtime, mode: str) -> None:
    text = (await run1(guarded, "Grep", pattern="API_TOKEN", output_mode=mode)).text()
    assert "s3cret" not in text and "k3y" not in text
    assert ".env" not in text.replace("left out", "") and "prod.key" not in text
    assert "app.py" in text
    assert "2 matching files are left out because permission rules forbid reading them" in text


async def test_glob_leaves_out_denied_files_and_says_so(guarded: Runtime) -> None:
    text = (await run1(guarded, "Glob", pattern="**/*")).text()
    assert "app.py" in text and ".env" not in text.split("\n\n")[0] and "prod.key" not in text
    assert "2 matching files are left out" in text


async def test_without_read_rules_only_credential_files_are_left_out(workspace: Path) -> None:
    (workspace / ".env").write_text("API_TOKEN=hidden\n")
    (workspace / "config.py").write_text("API_TOKEN = 'visible'\n")
    rt = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(read_settings=False))
    try:
        text = (await run1(rt, "Grep", pattern="API_TOKEN", output_mode="content")).text()
        assert "visible" in text and "hidden" not in text  # issue 13: .env files hold secrets
        assert "1 matching file is left out because they hold credentials" in text
        assert "permission rules" not in text
        listing = (await run1(rt, "Glob", pattern="**/*")).text()
        assert ".env" in listing and "left out" not in listing  # a listing shows names, not contents
    finally:
        await rt.aclose()


async def test_reading_the_denied_file_directly_is_still_refused(guarded: Runtime) -> None:
    result = await run1(guarded, "Read", file_path=".env")
    assert result.is_error and 'kind="permission"' in result.text()


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_a_credential_file_among_many_is_left_out_in_every_mode(workspace: Path, mode: str) -> None:
    # The listed files are cleared together when one pass can prove them clean; one .env among them makes it fail.
    for index in range(60):
        (workspace / f"module{index}.py").write_text("API_TOKEN = 'visible'\n")
    (workspace / "deploy").mkdir()
    (workspace / "deploy" / ".env").write_text("API_TOKEN=hidden\n")
    rt = build_runtime(workspace, NonInteractiveApprover(), RuntimeOptions(read_settings=False))
    try:
        text = (await run1(rt, "Grep", pattern="API_TOKEN", output_mode=mode, head_limit=0)).text()
        assert "hidden" not in text and "deploy" not in text
        assert all(f"module{index}.py" in text for index in range(60))
        assert "1 matching file is left out because they hold credentials" in text
    finally:
        await rt.aclose()
