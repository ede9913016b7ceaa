"""An editor that answers an approval or a diff review badly, or never, costs one call, never the session.

The answers are written to the sidecar's stdin by hand, with the id of the server's request, while the client's
own handler stays silent: pygls would never send these shapes, and a second, well-formed answer must not rescue
a broken one.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.integration.sidecar_client import DEADLINE, TEST_SERVER, SidecarClient, start_client, stop_client, use

from toolgate.sidecar.envelope import MAX_DEPTH

ALLOW = {"decision": "allow"}
DEEP_FEEDBACK = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)

# The answer's members after `"id": <id>`, as JSON text. Several say "allow" in a message that cannot be trusted.
BROKEN_ANSWERS = {
    "error a string": '"jsonrpc":"2.0","error":"boom"',
    "error an empty object": '"jsonrpc":"2.0","error":{}',
    "error code a string": '"jsonrpc":"2.0","error":{"code":"1","message":"no"}',
    "error null": '"jsonrpc":"2.0","error":null',
    "result and error": '"jsonrpc":"2.0","result":{"decision":"allow"},"error":{"code":1,"message":"no"}',
    "result a string": '"jsonrpc":"2.0","result":"yes"',
    "result null": '"jsonrpc":"2.0","result":null',
    "no jsonrpc": '"result":{"decision":"allow"}',
    "too deep": '"jsonrpc":"2.0","result":{"decision":"allow","feedback":%s}' % DEEP_FEEDBACK,  # noqa: UP031
}


class RawAnswer:
    """An approval/review handler that answers with `members` by hand, and through pygls only once released.

    The late, well-formed answer ("allow") must change nothing: by then the question is over."""

    def __init__(self, sidecar: SidecarClient, members: str) -> None:
        self._sidecar = sidecar
        self._members = members
        self.release = asyncio.Event()

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        stdin = self._sidecar._server.stdin if self._sidecar._server else None
        assert stdin is not None
        text = ('{"id":%s,%s}' % (json.dumps(self._sidecar.protocol.msg_id), self._members)).encode()  # noqa: UP031
        stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(text), text))
        await self.release.wait()
        return ALLOW


async def allow(params: dict[str, Any]) -> dict[str, Any]:
    return ALLOW


@pytest.mark.parametrize("shape", list(BROKEN_ANSWERS))
async def test_a_broken_approval_answer_refuses_the_call_and_the_session_goes_on(
    sidecar: SidecarClient, workspace: Path, shape: str
) -> None:
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_approval = broken = RawAnswer(sidecar, BROKEN_ANSWERS[shape])
    [refused] = await sidecar.run(session_id, use("Gate", label="a"))
    assert refused["is_error"] and "no answer came from the editor" in refused["content"], refused
    assert "passed" not in refused["content"]
    broken.release.set()
    await sidecar.wait_for_log("no request of ours still waiting")
    sidecar.answer_approval = allow
    [allowed] = await sidecar.run(session_id, use("Gate", label="b"))
    assert allowed["content"] == "gate b passed"


async def test_a_broken_review_answer_writes_nothing_and_the_session_goes_on(
    sidecar: SidecarClient, workspace: Path
) -> None:
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_review = broken = RawAnswer(sidecar, BROKEN_ANSWERS["error a string"])
    [refused] = await sidecar.run(session_id, use("Write", file_path="new.txt", content="x\n"))
    assert refused["is_error"] and not (workspace / "new.txt").exists()
    broken.release.set()
    sidecar.answer_review = accept = RawAnswer(sidecar, '"jsonrpc":"2.0","result":{"decision":"accept"}')
    [written] = await sidecar.run(session_id, use("Write", file_path="new.txt", content="y\n"))
    assert written["is_error"] is False and (workspace / "new.txt").read_text() == "y\n"
    accept.release.set()


async def test_an_editor_that_never_answers_is_given_up_on_at_the_deadline(storage: Path, workspace: Path) -> None:
    client = await start_client(TEST_SERVER)
    try:
        params = types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"storageDir": str(storage), "editorAnswerTimeoutSeconds": 0.5},
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
        async with asyncio.timeout(DEADLINE):
            await client.initialize_session(params)
        session_id = await client.new_session(workspace)

        async def never(params: dict[str, Any]) -> dict[str, Any]:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        client.answer_approval = never
        [refused] = await client.run(session_id, use("Gate", label="a"))
        assert refused["is_error"] and "no answer came from the editor" in refused["content"], refused
        assert "approval timeout ran out" in refused["content"], refused  # the model learns why nobody answered
        await client.wait_for_log("did not answer toolgate/approval/request within 0.5 s")
        client.answer_approval = allow
        [allowed] = await client.run(session_id, use("Gate", label="b"))
        assert allowed["content"] == "gate b passed"
    finally:
        await stop_client(client)


async def test_a_deadline_out_of_range_is_refused_at_initialize(storage: Path) -> None:
    client = await start_client(TEST_SERVER)
    try:
        params = types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"storageDir": str(storage), "editorAnswerTimeoutSeconds": 0},
        )
        with pytest.raises(Exception, match="editorAnswerTimeoutSeconds"):
            async with asyncio.timeout(DEADLINE):
                await client.initialize_session(params)
    finally:
        await stop_client(client)
