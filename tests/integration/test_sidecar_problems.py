"""The editor's problems over real JSON-RPC: a sidecar whose editor says it answers `toolgate/editor/problems` offers
the Problems tool and ends an Edit's result with the problems it introduced; one whose editor does not say so asks
nothing. The composer's `@problems` mention is answered through the same request. The test client plays the editor (a
toy language server: an error on each line containing BAD)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from tests.integration.sidecar_client import DEADLINE, TEST_SERVER, SidecarClient, start_client, stop_client, use
from tests.integration.test_sidecar_chat import configure, mock_model, start_mock

from toolgate.mockmodel import MockModelServer
from toolgate.sidecar import protocol as p
from toolgate.sidecar.protocol_problems import EDITOR_PROBLEMS

__all__ = ["mock_model"]  # the fixture, used by name

# The files the editor has problems for, when it is asked about the whole workspace.
KNOWN_FILES = ("main.ts",)


def answer_like_an_editor(asked: list[dict[str, Any]], workspace: Path, *, cold: bool = False) -> Any:
    """`cold`: an editor whose buffers never take a written content (its file watcher is late) and whose language
    server has not reported on anything yet."""

    async def respond(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        files = []
        known = [{"path": str(workspace / name), "contentSha256": None} for name in KNOWN_FILES]
        for wanted in params["files"] if params["files"] is not None else known:
            text = Path(wanted["path"]).read_text(encoding="utf-8")
            settled = wanted["contentSha256"] in (None, hashlib.sha256(text.encode()).hexdigest())
            problems = [
                {"line": i, "character": line.index("BAD"), "severity": "error", "message": "no BAD", "source": "toy"}
                for i, line in enumerate(text.splitlines())
                if "BAD" in line
            ]
            answer = {"path": wanted["path"], "covered": True, "settled": settled, "problems": problems}
            if cold:
                loaded = wanted["contentSha256"] is None
                answer |= {"settled": loaded, "loaded": loaded, "heardFromServer": bool(problems)}
            files.append(answer)
        return {"files": files, "waitedSeconds": 1.5}

    return respond


async def started(
    storage: Path, workspace: Path, options: dict[str, Any], asked: list[dict[str, Any]], *, cold: bool = False
) -> SidecarClient:
    client = await start_client(TEST_SERVER)
    client.feature(EDITOR_PROBLEMS)(answer_like_an_editor(asked, workspace, cold=cold))
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        initialization_options={"storageDir": str(storage), **options},
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
    )
    async with asyncio.timeout(DEADLINE):
        await client.initialize_session(params)
    return client


@pytest.fixture
def asked() -> list[dict[str, Any]]:
    return []


@pytest.fixture
async def editor_sidecar(storage: Path, workspace: Path, asked: list[dict[str, Any]]) -> AsyncIterator[SidecarClient]:
    client = await started(storage, workspace, {"editorProblems": True}, asked)
    try:
        yield client
    finally:
        await stop_client(client)


async def test_an_edit_ends_with_the_problem_it_introduced(
    editor_sidecar: SidecarClient, workspace: Path, asked: list[dict[str, Any]]
) -> None:
    path = workspace / "main.ts"
    path.write_text("const a = 1\n", encoding="utf-8")
    session_id = await editor_sidecar.new_session(workspace, mode="bypassPermissions")
    tools = await editor_sidecar.call(p.TOOLS_LIST, {"sessionId": session_id})
    assert "Problems" in [t["name"] for t in tools["tools"]]
    _, edited = await editor_sidecar.run(
        session_id,
        use("Read", file_path=str(path)),
        use("Edit", file_path=str(path), old_string="1", new_string="BAD"),
    )
    assert not edited["is_error"]
    assert edited["content"].endswith(
        "New problems the editor reports after this change:\nmain.ts:1:11 error (toy): no BAD"
    )
    before, after = asked
    assert before == {"files": [{"path": str(path), "contentSha256": None}], "wait": True, "patient": False}
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert after == {"files": [{"path": str(path), "contentSha256": digest}], "wait": True, "patient": True}
    [problems] = await editor_sidecar.run(session_id, use("Problems", path="main.ts"))
    assert problems["content"] == "1 problem in main.ts:\nmain.ts:1:11 error (toy): no BAD"


async def test_a_change_the_editor_did_not_load_and_a_server_not_heard_from_are_named(
    storage: Path, workspace: Path, asked: list[dict[str, Any]]
) -> None:
    client = await started(storage, workspace, {"editorProblems": True}, asked, cold=True)
    try:
        path = workspace / "main.ts"
        path.write_text("const a = 1\n", encoding="utf-8")
        session_id = await client.new_session(workspace, mode="bypassPermissions")
        _, edited = await client.run(
            session_id,
            use("Read", file_path=str(path)),
            use("Edit", file_path=str(path), old_string="1", new_string="2"),
        )
        assert edited["content"] == (
            "Edited main.ts (line 1).\n\nThe editor had not yet loaded the change to main.ts, so problems may be "
            "missing here; the Problems tool shows them later."
        )
        [problems] = await client.run(session_id, use("Problems", path="main.ts"))
        assert problems["content"] == (
            "No errors or warnings listed in main.ts.\nNo language server has reported on main.ts yet (it may still "
            "be starting), so no problems listed for it does not mean none; ask again in a moment."
        )
    finally:
        await stop_client(client)


async def test_without_the_editor_saying_so_nothing_is_asked_and_no_tool_offered(
    storage: Path, workspace: Path, asked: list[dict[str, Any]]
) -> None:
    client = await started(storage, workspace, {}, asked)
    try:
        path = workspace / "main.ts"
        path.write_text("const a = 1\n", encoding="utf-8")
        session_id = await client.new_session(workspace, mode="bypassPermissions")
        tools = await client.call(p.TOOLS_LIST, {"sessionId": session_id})
        assert "Problems" not in [t["name"] for t in tools["tools"]]
        _, edited = await client.run(
            session_id,
            use("Read", file_path=str(path)),
            use("Edit", file_path=str(path), old_string="1", new_string="BAD"),
        )
        assert edited["content"] == "Edited main.ts (line 1)."
        assert asked == []
    finally:
        await stop_client(client)


async def test_a_problems_mention_reaches_the_model_as_the_problems_tool_lists_them(
    editor_sidecar: SidecarClient, workspace: Path, asked: list[dict[str, Any]], mock_model: list[MockModelServer]
) -> None:
    (workspace / "main.ts").write_text("const a = 1\nconst b = BAD\n", encoding="utf-8")
    mock = start_mock(mock_model, [{"text": "I see it."}])
    await configure(editor_sidecar, mock)
    session_id = await editor_sidecar.new_session(workspace)
    sent = {"sessionId": session_id, "text": "fix @problems", "attachments": [{"kind": "problems"}]}
    assert (await editor_sidecar.call(p.CHAT_SEND, sent))["stopReason"] == "end_turn"
    prompt = mock.requests[0].json["messages"][-1]["content"]
    listed = "1 problem in the workspace:\nmain.ts:2:11 error (toy): no BAD"
    assert [block["text"] for block in prompt] == [
        "fix @problems",
        f"The person attached the editor's problems:\n{listed}",
    ]
    assert asked == [{"files": None, "wait": False, "patient": True}]  # the sidecar asked; the mention carried none
    [tool] = await editor_sidecar.run(session_id, use("Problems"))
    assert tool["content"] == listed


async def test_a_problems_mention_without_the_editor_says_they_need_it(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"text": "Then I will run the checks."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    sent = {"sessionId": session_id, "text": "fix @problems", "attachments": [{"kind": "problems"}]}
    await sidecar.call(p.CHAT_SEND, sent)
    [_, block] = mock.requests[0].json["messages"][-1]["content"]
    assert block["text"].startswith("The person attached the editor's problems, but this session has no editor to ask")
