"""Cancellation, disconnects, malformed input and crashing handlers: the sidecar answers or exits cleanly."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams, JsonRpcMethodNotFound
from tests.integration.sidecar_client import (
    DEADLINE,
    REAL_SERVER,
    SidecarClient,
    initialize,
    start_client,
    stop_client,
    use,
)

from toolgate.sidecar import protocol as p


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_cancel_request_interrupts_running_tools_and_answers_every_call(
    sidecar: SidecarClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    session_id = await sidecar.new_session(workspace)
    sleep, read = use("Sleep"), use("Read", file_path="a.txt")
    params = {"sessionId": session_id, "calls": [sleep, use("Gate", label="x"), read]}
    running = asyncio.create_task(sidecar.call(p.TOOLS_RUN, params, msg_id="long-turn"))

    await sidecar.wait_for(lambda: sidecar.progress_events)
    [started] = sidecar.progress_events
    assert (started["sessionId"], started["toolUseId"], started["kind"]) == (session_id, sleep["id"], "started")
    pid = int(started["text"].removeprefix("pid="))
    assert not process_gone(pid)

    sidecar.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="long-turn"))
    results = (await running)["results"]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in params["calls"]]
    assert all(r["is_error"] for r in results)
    assert f"process group {pid} was killed" in results[0]["content"]
    assert "Not run" in results[1]["content"] and "Not run" in results[2]["content"]
    assert process_gone(pid)
    assert sidecar.approvals == []  # the Gate call never started, so nobody was asked
    assert await sidecar.call(p.PING) == {}  # and the session still serves
    [again] = await sidecar.run(session_id, read)
    assert again["content"] == "1\ta"


async def test_cancelling_while_an_approval_is_pending_withdraws_it(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    withdrawn = asyncio.Event()

    async def never_answer(params: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            withdrawn.set()  # the server sent $/cancelRequest for this question
            raise
        raise AssertionError("unreachable")

    sidecar.answer_approval = never_answer
    params = {"sessionId": session_id, "calls": [use("Gate", label="x")]}
    running = asyncio.create_task(sidecar.call(p.TOOLS_RUN, params, msg_id="waiting-turn"))
    await sidecar.wait_for(lambda: sidecar.approvals)
    sidecar.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="waiting-turn"))
    [result] = (await running)["results"]
    assert result["is_error"] and "waiting for the user's approval, so it did not run" in result["content"]
    async with asyncio.timeout(DEADLINE):
        await withdrawn.wait()


async def test_client_disconnect_with_an_approval_pending(storage: Path, workspace: Path) -> None:
    client = await start_client(REAL_SERVER)
    try:
        await initialize(client, storage, workspace)
        session_id = await client.new_session(workspace)

        async def never_answer(params: dict[str, Any]) -> dict[str, Any]:
            await asyncio.sleep(3600)
            raise AssertionError("unreachable")

        client.answer_approval = never_answer
        # The real server's minimal policy asks before reading outside the workspace.
        params = {"sessionId": session_id, "calls": [use("Read", file_path="/etc/hostname")]}
        running = asyncio.create_task(client.call(p.TOOLS_RUN, params))
        await client.wait_for(lambda: client.approvals)
        assert client._server is not None and client._server.stdin is not None
        client._server.stdin.close()  # the editor went away mid-question
        # (pygls's client cannot clean up its own pending handler when the server exits; do it for it.)
        for pending in list(client.protocol._request_futures.values()):
            if isinstance(pending, asyncio.Task):
                pending.cancel()
        assert await client.exited() == 0
        await client.wait_for_log("closed the connection")
        await client.wait_for_log("not given: the editor disconnected")
        # Its stdout was still open, so the turn's answer even arrived: the call was denied, not dropped.
        [result] = (await running)["results"]
        assert result["is_error"] and "no answer came from the editor" in result["content"]
    finally:
        await stop_client(client)


async def test_sigterm_interrupts_running_tools_and_exits(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    running = asyncio.create_task(sidecar.call(p.TOOLS_RUN, {"sessionId": session_id, "calls": [use("Sleep")]}))
    await sidecar.wait_for(lambda: sidecar.progress_events)
    pid = int(sidecar.progress_events[0]["text"].removeprefix("pid="))
    os.kill(sidecar.pid, signal.SIGTERM)
    [result] = (await running)["results"]  # answered before the server went away
    assert f"process group {pid} was killed" in result["content"]
    assert await sidecar.exited() == 0
    assert process_gone(pid)
    await sidecar.wait_for_log("stopped by a signal")


async def test_malformed_params_name_the_fields(sidecar: SidecarClient, workspace: Path) -> None:
    with pytest.raises(JsonRpcInvalidParams) as bad:
        await sidecar.call(p.TOOLS_RUN, {"sessionId": 5, "calls": "x", "extra": True})
    message = str(bad.value)
    assert "`sessionId`" in message and "`calls`" in message and "`extra`" in message
    fields = {e["field"] for e in bad.value.data["errors"]}
    assert fields == {"sessionId", "calls", "extra"}

    with pytest.raises(JsonRpcInvalidParams, match=r"`calls\[0\]\.id`"):
        await sidecar.call(p.TOOLS_RUN, {"sessionId": "abc", "calls": [{"name": "Read"}]})
    with pytest.raises(JsonRpcInvalidParams, match="`sessionId`"):
        await sidecar.call(p.SESSION_DELETE, {"sessionId": "../../etc"})  # never a path outside the root
    with pytest.raises(JsonRpcInvalidParams, match="`mode`"):
        await sidecar.call(p.SESSION_NEW, {"workspace": str(workspace), "mode": "yolo"})
    with pytest.raises(JsonRpcInvalidParams, match="There is no session"):
        await sidecar.run("0123abcd", use("Read", file_path="a"))
    assert await sidecar.call(p.PING, None) == {}


async def test_a_crashing_handler_is_an_error_and_the_server_keeps_serving(sidecar: SidecarClient) -> None:
    with pytest.raises(JsonRpcInternalError, match="RuntimeError: this handler always crashes"):
        await sidecar.call("test/crash", {})
    await sidecar.wait_for_log("test/crash failed")
    assert await sidecar.call(p.PING) == {}


async def test_nothing_but_protocol_messages_reach_stdout(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    [result] = await sidecar.run(session_id, use("Noisy"))
    assert result["content"] == "made some noise"
    await sidecar.wait_for_log("noise from print()")
    await sidecar.wait_for_log("noise from a child process")
    assert await sidecar.call(p.PING) == {}


GARBAGE = [
    b"\x00\xff\xfe garbage without a newline, then one\r\n",
    b"Content-Length: 7\r\n\r\n{bogus}",  # framed, but not JSON
    b"Content-Length: 5\r\n\r\n[1,2]",  # JSON, but not a JSON-RPC object
    b'Content-Length: 51\r\n\r\n{"jsonrpc":"2.0","id":99,"method":"initialize","params":1}',
    b"Content-Length: nope\r\n\r\n",
    os.urandom(4096).replace(b"\n", b""),
    b"\r\n",
]


async def test_garbage_on_stdin_is_logged_and_the_server_stays_up(sidecar: SidecarClient) -> None:
    assert sidecar._server is not None and sidecar._server.stdin is not None
    for chunk in GARBAGE:
        sidecar._server.stdin.write(chunk)
    await sidecar._server.stdin.drain()
    await sidecar.wait_for_log("not JSON-RPC message headers")
    await sidecar.wait_for_log("not valid JSON")
    assert await sidecar.call(p.PING) == {}


async def test_garbage_then_end_of_input_exits_cleanly(storage: Path) -> None:
    client = await start_client(REAL_SERVER)
    try:
        assert client._server is not None and client._server.stdin is not None
        client._server.stdin.write(b"".join(GARBAGE))
        client._server.stdin.close()
        assert await client.exited() == 0
        await client.wait_for_log("not JSON-RPC message headers")
        await client.wait_for_log("closed the connection")
    finally:
        await stop_client(client)


async def test_an_unanswerable_request_still_gets_an_error(sidecar: SidecarClient) -> None:
    # An LSP method the sidecar does not serve, with params nothing could read: answered, never left waiting.
    bad = {"jsonrpc": "2.0", "id": "bad-hover", "method": types.TEXT_DOCUMENT_HOVER, "params": {"textDocument": 5}}
    with pytest.raises(JsonRpcMethodNotFound, match="no method 'textDocument/hover'"):
        await sidecar.raw_request(bad)
    # A toolgate method whose params do not fit names the field.
    unfit = {"jsonrpc": "2.0", "id": "bad-load", "method": p.SESSION_LOAD, "params": {"sessionId": 5}}
    with pytest.raises(JsonRpcInvalidParams, match="sessionId"):
        await sidecar.raw_request(unfit)
    assert await sidecar.call(p.PING) == {}
