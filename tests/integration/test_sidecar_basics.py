"""The sidecar over real stdio: initialize, the typed protocol, sessions and settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerNotInitialized
from tests.integration.sidecar_client import (
    REAL_SERVER,
    TEST_SERVER,
    SidecarClient,
    initialize,
    start_client,
    stop_client,
    use,
)

from toolgate.sidecar import protocol as p


def real(path: Path) -> str:
    return str(path.resolve())


async def test_initialize_advertises_text_sync_with_save(storage: Path, workspace: Path) -> None:
    client = await start_client(REAL_SERVER)
    try:
        result = await initialize(client, storage, workspace)
        sync = result.capabilities.text_document_sync
        assert isinstance(sync, types.TextDocumentSyncOptions)
        assert sync.open_close is True
        assert sync.change == types.TextDocumentSyncKind.Incremental
        assert sync.save  # didSave tells the mirror a buffer is clean again
        tools = (await client.call(p.TOOLS_LIST))["tools"]
        names = [t["name"] for t in tools]
        assert names == sorted(names) and {"Read", "Edit", "Write"} <= set(names)
        assert all(t["input_schema"]["additionalProperties"] is False for t in tools)
        await client.shutdown_session()
        assert client._server is not None and client._server.returncode == 0
    finally:
        await stop_client(client)


async def test_custom_requests_before_initialize_are_refused(storage: Path) -> None:
    client = await start_client(TEST_SERVER)
    try:
        with pytest.raises(JsonRpcException, match="initialize") as refused:
            await client.call(p.PING)
        assert refused.value.code == JsonRpcServerNotInitialized.CODE
        await initialize(client, storage)
        assert await client.call(p.PING) == {}
    finally:
        await stop_client(client)


async def test_tools_run_returns_plain_json_results_in_order(sidecar: SidecarClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    session_id = await sidecar.new_session(workspace)
    calls = [use("Read", file_path="a.txt"), use("Nope"), use("Read", file_path="a.txt", offset="x")]
    results = await sidecar.run(session_id, *calls)
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    expected = {"type": "tool_result", "tool_use_id": calls[0]["id"], "content": "1\thello", "is_error": False}
    assert results[0] == expected
    assert results[1]["is_error"] and 'kind="unknown_tool"' in results[1]["content"]
    assert results[2]["is_error"] and 'kind="invalid_input"' in results[2]["content"]


async def test_tools_list_for_a_session(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    tools = (await sidecar.call(p.TOOLS_LIST, {"sessionId": session_id}))["tools"]
    names = [t["name"] for t in tools]
    assert names == sorted(names) and {"Read", "Write", "Gate", "Sleep"} <= set(names)
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)


async def test_session_new_list_settings_and_meta_file(sidecar: SidecarClient, workspace: Path, storage: Path) -> None:
    info = await sidecar.call(p.SESSION_NEW, {"title": "first"})  # workspace defaults to the first folder
    session_id = info["sessionId"]
    assert info["workspace"] == real(workspace)
    assert (info["mode"], info["reviewEdits"], info["title"], info["live"]) == ("default", "when_asking", "first", True)

    settings = await sidecar.call(p.SETTINGS_SET_MODE, {"sessionId": session_id, "mode": "acceptEdits"})
    assert {k: settings[k] for k in ("sessionId", "mode", "reviewEdits")} == {
        "sessionId": session_id,
        "mode": "acceptEdits",
        "reviewEdits": "when_asking",
    }
    assert settings["rules"] == [] and settings["problems"] == []
    assert settings["sandbox"]["state"] in ("on", "off", "unavailable") and settings["sandbox"]["detail"]
    settings = await sidecar.call(p.SETTINGS_SET_REVIEW_EDITS, {"sessionId": session_id, "reviewEdits": "always"})
    assert settings["reviewEdits"] == "always"
    assert await sidecar.call(p.SETTINGS_GET, {"sessionId": session_id}) == settings

    meta = json.loads((storage / "sessions" / session_id / "meta.json").read_text())
    assert meta["id"] == session_id
    assert (meta["workspace"], meta["mode"], meta["review_edits"], meta["title"]) == (
        real(workspace),
        "acceptEdits",
        "always",
        "first",
    )
    assert meta["created"] <= meta["updated"]

    listed = (await sidecar.call(p.SESSION_LIST))["sessions"]
    assert [s["sessionId"] for s in listed] == [session_id] and listed[0]["live"] is True


async def test_sessions_survive_a_restart_and_delete_removes_them(storage: Path, workspace: Path) -> None:
    first = await start_client(TEST_SERVER)
    try:
        await initialize(first, storage, workspace)
        session_id = await first.new_session(workspace, mode="plan")
    finally:
        await stop_client(first)

    second = await start_client(TEST_SERVER)
    try:
        await initialize(second, storage, workspace)
        [listed] = (await second.call(p.SESSION_LIST))["sessions"]
        assert (listed["sessionId"], listed["live"], listed["mode"]) == (session_id, False, "plan")
        with pytest.raises(JsonRpcInvalidParams, match="session/load"):
            await second.run(session_id, use("Read", file_path="x"))
        loaded = await second.call(p.SESSION_LOAD, {"sessionId": session_id})
        assert (loaded["live"], loaded["mode"]) == (True, "plan")
        assert await second.call(p.SESSION_DELETE, {"sessionId": session_id}) == {}
        assert not (storage / "sessions" / session_id).exists()
        assert (await second.call(p.SESSION_LIST))["sessions"] == []
        with pytest.raises(JsonRpcInvalidParams, match="There is no session"):
            await second.call(p.SESSION_DELETE, {"sessionId": session_id})
    finally:
        await stop_client(second)


async def test_session_new_refuses_a_missing_workspace(sidecar: SidecarClient, tmp_path: Path) -> None:
    with pytest.raises(JsonRpcInvalidParams, match="not a directory"):
        await sidecar.call(p.SESSION_NEW, {"workspace": str(tmp_path / "missing")})
    with pytest.raises(JsonRpcInvalidParams, match="absolute"):
        await sidecar.call(p.SESSION_NEW, {"workspace": "relative/dir"})
