"""The composer over the sidecar: attachments reach the model and count as reads; the model picker lists the
provider's models and switches the model of the next request (real server, real SDK, the mock model)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from tests.integration.sidecar_client import SidecarClient
from tests.integration.test_sidecar_approvals import answer
from tests.integration.test_sidecar_chat import configure, events_of, mock_model, start_mock

from toolgate.mockmodel import MockModelServer
from toolgate.sidecar import protocol as p
from toolgate.sidecar.protocol_composer import MODELS_LIST, MODELS_SELECT

__all__ = ["mock_model"]  # the fixture, used by name


async def test_an_attached_file_and_selection_reach_the_model_and_an_edit_may_follow(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    (workspace / "app.py").write_text("x = 1\ny = 2\n")
    (workspace / "notes.md").write_text("first\nsecond\nthird\n")
    edit = {"name": "Edit", "input": {"file_path": "app.py", "old_string": "y = 2", "new_string": "y = 3"}}
    mock = start_mock(mock_model, [{"tool_uses": [edit]}, {"text": "Changed."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_review = answer({"decision": "accept"})
    attachments = [
        {"kind": "file", "path": str(workspace / "app.py")},
        {"kind": "selection", "path": str(workspace / "notes.md"), "startLine": 2, "endLine": 3},
    ]
    sent = {"sessionId": session_id, "text": "set y to 3 in @app.py", "attachments": attachments}
    assert (await sidecar.call(p.CHAT_SEND, sent))["stopReason"] == "end_turn"

    prompt = mock.requests[0].json["messages"][-1]["content"]
    assert [block["text"] for block in prompt] == [
        "set y to 3 in @app.py",
        "The person attached app.py, the whole file:\n1\tx = 1\n2\ty = 2",
        "The person attached notes.md, lines 2-3 of 3:\n2\tsecond\n3\tthird",
    ]
    [finished] = [e for e in events_of(sidecar) if e["type"] == "tool_call_finished"]
    assert not finished["is_error"], finished  # the attached whole file counted as a Read
    assert (workspace / "app.py").read_text() == "x = 1\ny = 3\n"


async def test_a_file_with_unsaved_changes_is_attached_as_the_editor_shows_it(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    target = workspace / "open.txt"
    target.write_text("saved text\n")
    edit = {"name": "Edit", "input": {"file_path": "open.txt", "old_string": "text", "new_string": "words"}}
    mock = start_mock(mock_model, [{"tool_uses": [edit]}, {"text": "I will wait for the save."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    uri = target.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text="saved text\n")
    sidecar.text_document_did_open(types.DidOpenTextDocumentParams(item))
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(0, 0), types.Position(0, 5)), text="unsaved"
    )
    sidecar.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=2), [change])
    )
    attachments = [{"kind": "file", "path": str(target)}]
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "look", "attachments": attachments})

    [_, block] = mock.requests[0].json["messages"][-1]["content"]
    assert block["text"].endswith("the file on disk differs. Do not edit it until it is saved.\n1\tunsaved text")
    [finished] = [e for e in events_of(sidecar) if e["type"] == "tool_call_finished"]
    assert finished["is_error"] and target.read_text() == "saved text\n"  # the buffer's text was no Read


async def test_a_message_without_attachments_is_sent_as_before(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"text": "Hi."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "hello"})
    assert [block["text"] for block in mock.requests[0].json["messages"][-1]["content"]] == ["hello"]


async def test_the_picker_lists_the_providers_models_and_switches_the_next_request(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    mock = start_mock(mock_model, [{"text": "one"}, {"text": "two"}])
    await configure(sidecar, mock)
    listed = await sidecar.call(MODELS_LIST, {"configured": ["from-settings", "mock-model"]})
    assert listed == {
        "current": "mock-model",
        "models": ["mock-model", "from-settings", "mock-model-large"],
        "problem": None,
    }
    session_id = await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "first"})
    chosen = await sidecar.call(MODELS_SELECT, {"model": "mock-model-large"})
    assert chosen["model"] == "mock-model-large"
    await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "second"})
    assert [r.json["model"] for r in mock.requests] == ["mock-model", "mock-model-large"]
    assert (await sidecar.call(p.PROVIDER_STATUS, {}))["model"] == "mock-model-large"


async def test_a_server_that_refused_stream_options_is_not_asked_again_after_a_model_switch(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    """A switch (and another chat) makes a new provider; what the last one learned about the server stays with the
    server's base URL. Another base URL is asked afresh."""
    steps = [{"text": "one"}, {"text": "two"}, {"text": "three"}]
    refusing = MockModelServer({"steps": steps, "refuses_stream_options": 400}).start()
    mock_model.append(refusing)
    await sidecar.call(p.PROVIDER_CONFIGURE, _openai_at(refusing))
    first_chat, second_chat = await sidecar.new_session(workspace), await sidecar.new_session(workspace)
    await sidecar.call(p.CHAT_SEND, {"sessionId": first_chat, "text": "first"})
    await sidecar.call(MODELS_SELECT, {"model": "mock-model-large"})
    await sidecar.call(p.CHAT_SEND, {"sessionId": first_chat, "text": "second"})
    await sidecar.call(p.CHAT_SEND, {"sessionId": second_chat, "text": "third"})

    asked = [(r.json["model"], "stream_options" in r.json, r.status) for r in refusing.requests]
    assert asked == [
        ("mock-model", True, 400),  # the one refusal
        ("mock-model", False, 200),
        ("mock-model-large", False, 200),
        ("mock-model-large", False, 200),
    ]

    other = start_mock(mock_model, [{"text": "four"}])
    await sidecar.call(p.PROVIDER_CONFIGURE, _openai_at(other))
    await sidecar.call(p.CHAT_SEND, {"sessionId": first_chat, "text": "fourth"})
    [request] = other.requests
    assert (request.json["stream_options"], request.status) == ({"include_usage": True}, 200)


def _openai_at(mock: MockModelServer) -> dict[str, str]:
    return {"provider": "openai", "baseUrl": mock.openai_url, "apiKey": "test-key", "model": "mock-model"}


async def test_a_provider_that_cannot_list_still_offers_the_settings_models(sidecar: SidecarClient) -> None:
    await sidecar.call(p.PROVIDER_CONFIGURE, {"provider": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"})
    listed = await sidecar.call(MODELS_LIST, {"configured": ["other"]})
    assert listed["models"] == ["m", "other"]
    assert listed["problem"].startswith("The openai models API did not answer")


async def test_an_attached_file_a_deny_rule_guards_is_not_sent(
    sidecar: SidecarClient, workspace: Path, mock_model: list[MockModelServer]
) -> None:
    # Attaching is the person's choice, so nothing is asked; a deny rule (or managed policy) still holds.
    (workspace / ".toolgate").mkdir(exist_ok=True)
    (workspace / ".toolgate" / "settings.json").write_text('{"permissions": {"deny": ["Read(./private.txt)"]}}')
    (workspace / "private.txt").write_text("the launch codes\n")
    mock = start_mock(mock_model, [{"text": "Noted."}])
    await configure(sidecar, mock)
    session_id = await sidecar.new_session(workspace)
    sent = {"sessionId": session_id, "text": "look", "attachments": [{"kind": "file", "path": "private.txt"}]}
    assert (await sidecar.call(p.CHAT_SEND, sent))["stopReason"] == "end_turn"
    [_, block] = mock.requests[0].json["messages"][-1]["content"]
    assert "launch codes" not in block["text"]
    assert block["text"].startswith("The person attached private.txt, but it is not shown: the rules deny reading it")
