"""The panel's session history over the real sidecar: the list's titles, dates and prompt counts, renaming,
searching titles and conversations, and exporting a session as Markdown and JSON (the mock model on 127.0.0.1)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException
from tests.integration.sidecar_client import SidecarClient
from tests.integration.test_sidecar_chat import configure, mock_model, start_mock

from toolgate.mockmodel import MockModelServer
from toolgate.sidecar import protocol as p
from toolgate.sidecar import protocol_sessions as ps

__all__ = ["mock_model"]  # the fixture, shared with the chat tests


async def two_sessions(sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]) -> tuple[str, str]:
    (workspace / "parser.py").write_text("def parse(text):\n    return text.split()\n")
    mock = start_mock(
        mock_model,
        [
            {"text": "Let me read it.", "tool_uses": [{"name": "Read", "input": {"file_path": "parser.py"}}]},
            {"text": "The parser splits on `white space`."},
            {"text": "A cache keeps answers for an hour."},
            {"text": "It still splits."},
        ],
    )
    await configure(sidecar, mock)
    first = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": first, "text": "How does the parser work?\nin detail"})
    second = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": second, "text": "Explain the Cache"})
    return first, second


async def test_the_list_names_sessions_by_their_first_prompt_and_a_rename_sticks(
    sidecar: SidecarClient, workspace: Path, storage: Path, mock_model: list[MockModelServer]
) -> None:
    first, second = await two_sessions(sidecar, workspace, mock_model)
    listed = (await sidecar.call(p.SESSION_LIST))["sessions"]
    assert [(s["sessionId"], s["title"], s["turns"]) for s in listed] == [
        (second, "Explain the Cache", 1),
        (first, "How does the parser work?", 1),
    ]
    for session in listed:
        assert datetime.fromisoformat(session["createdAt"]) <= datetime.fromisoformat(session["updatedAt"])

    renamed = await sidecar.call(ps.SESSION_RENAME, {"sessionId": first, "title": "  Parser   notes "})
    assert renamed == {"title": "Parser notes"}
    on_disk = json.loads((storage / "sessions" / first / "meta.json").read_text())
    assert on_disk["title"] == "Parser notes"
    # Renaming is not using: the list keeps its order. A later prompt counts, and does not rename it back.
    assert [s["sessionId"] for s in (await sidecar.call(p.SESSION_LIST))["sessions"]] == [second, first]
    await sidecar.call(p.CHAT_SEND, {"sessionId": first, "text": "And now?"})
    listed = {s["sessionId"]: s for s in (await sidecar.call(p.SESSION_LIST))["sessions"]}
    assert listed[first]["title"] == "Parser notes" and listed[first]["turns"] == 2

    with pytest.raises(JsonRpcException, match="at least one character"):
        await sidecar.call(ps.SESSION_RENAME, {"sessionId": first, "title": "   "})
    with pytest.raises(JsonRpcException, match="There is no session nope"):
        await sidecar.call(ps.SESSION_RENAME, {"sessionId": "nope", "title": "x"})


async def test_a_session_closed_in_this_sidecar_is_renamed_on_disk(
    sidecar: SidecarClient, workspace: Path, storage: Path
) -> None:
    session_id = await sidecar.new_session(workspace)
    directory = storage / "sessions"
    closed = "stored1"
    (directory / closed).mkdir()
    meta = json.loads((directory / session_id / "meta.json").read_text()) | {"id": closed, "title": "old"}
    (directory / closed / "meta.json").write_text(json.dumps(meta))

    assert await sidecar.call(ps.SESSION_RENAME, {"sessionId": closed, "title": "new"}) == {"title": "new"}
    assert json.loads((directory / closed / "meta.json").read_text())["title"] == "new"
    [stored] = [s for s in (await sidecar.call(p.SESSION_LIST))["sessions"] if s["sessionId"] == closed]
    assert stored["title"] == "new" and stored["live"] is False and stored["turns"] == 0


async def test_search_finds_titles_and_what_was_said_ignoring_case(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    first, second = await two_sessions(sidecar, workspace, mock_model)
    await sidecar.call(ps.SESSION_RENAME, {"sessionId": first, "title": "Tokens"})

    async def search(query: str) -> list[dict[str, object]]:
        return list((await sidecar.call(ps.SESSION_SEARCH, {"query": query}))["matches"])

    assert await search("cache") == [
        {"sessionId": second, "inTitle": True, "snippet": "Explain the Cache"}
    ]  # the prompt holds it too
    [answer] = await search("AN HOUR")  # the model's answer
    assert answer["sessionId"] == second and answer["inTitle"] is False
    assert answer["snippet"] == "A cache keeps answers for an hour."
    [by_title] = await search("tokens")
    assert by_title == {"sessionId": first, "inTitle": True, "snippet": None}
    [quoted] = await search("`white space`")  # text JSON writes escaped or not, found all the same
    assert quoted["sessionId"] == first
    assert await search("return text.split") == []  # a file the model read is not what was said
    with pytest.raises(JsonRpcException, match="query"):
        await sidecar.call(ps.SESSION_SEARCH, {"query": ""})


async def test_export_as_markdown_reads_as_the_conversation_and_json_keeps_every_message(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    first, _ = await two_sessions(sidecar, workspace, mock_model)

    markdown = await sidecar.call(ps.SESSION_EXPORT, {"sessionId": first, "format": "markdown"})
    assert markdown["fileName"] == "how-does-the-parser-work.md"
    text = markdown["content"]
    assert text.startswith("# How does the parser work?\n")
    assert f"- Workspace: `{workspace.resolve()}`" in text and "- Prompts: 1" in text
    body = text[text.index("## You") :]
    assert body == (
        "## You\n\nHow does the parser work?\nin detail\n\n"
        "## toolgate\n\nLet me read it.\n\n"
        "- **Read** `parser.py` — 1 def parse(text):\n\n"
        "The parser splits on `white space`.\n"
    )

    exported = await sidecar.call(ps.SESSION_EXPORT, {"sessionId": first, "format": "json"})
    document = json.loads(exported["content"])
    assert exported["fileName"] == "how-does-the-parser-work.json"
    assert document["format"] == "toolgate-session" and document["session"]["id"] == first
    assert [m["role"] for m in document["messages"]] == ["user", "assistant", "user", "assistant"]
    assert document["messages"][2]["content"][0]["type"] == "tool_result" and document["compactions"] == []

    with pytest.raises(JsonRpcException, match="format"):
        await sidecar.call(ps.SESSION_EXPORT, {"sessionId": first, "format": "pdf"})
