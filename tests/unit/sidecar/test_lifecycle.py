"""The LSP lifecycle as the sidecar serves it: initialize, requests before it, shutdown, exit, text sync wiring."""

from __future__ import annotations

from pathlib import Path

from tests.unit.sidecar.in_process import initialize_params, send, serving

from toolgate import __version__


async def test_initialize_answers_what_the_sidecar_serves_and_requests_before_it_are_refused(tmp_path: Path) -> None:
    server, out = serving()
    send(server, "toolgate/settings/get", {"sessionId": "s"}, msg_id=1)
    early = await out.next()
    assert early["error"]["code"] == -32002 and "initialize" in early["error"]["message"]

    send(server, "initialize", initialize_params(tmp_path / "storage"), msg_id=2)
    answer = out.messages[-1]["result"]
    assert answer["serverInfo"] == {"name": "toolgate", "version": __version__}
    assert answer["capabilities"]["textDocumentSync"] == {
        "openClose": True,
        "change": 2,
        "save": {"includeText": False},
    }
    assert answer["capabilities"]["positionEncoding"] == "utf-16"


def test_initialize_with_bad_options_is_refused_by_field_and_can_be_sent_again(tmp_path: Path) -> None:
    server, out = serving()
    send(server, "initialize", initialize_params(Path("relative/dir")), msg_id=1)
    refused = out.messages[-1]["error"]
    assert refused["code"] == -32602 and "storageDir must be an absolute path" in refused["message"]
    send(server, "initialize", {**initialize_params(tmp_path), "workspaceFolders": "not a list"}, msg_id=2)
    assert out.messages[-1]["error"]["code"] == -32602 and "workspaceFolders" in out.messages[-1]["error"]["message"]

    folder = tmp_path / "ws"
    params = {**initialize_params(tmp_path / "storage"), "workspaceFolders": [{"uri": folder.as_uri(), "name": "ws"}]}
    send(server, "initialize", params, msg_id=3)
    assert "result" in out.messages[-1]
    assert server.workspace_folders == [folder]


async def test_shutdown_then_exit_ends_with_0_and_refuses_requests_in_between(tmp_path: Path) -> None:
    server, out = serving()
    send(server, "initialize", initialize_params(tmp_path), msg_id=1)
    send(server, "shutdown", msg_id=2)
    assert out.messages[-1] == {"jsonrpc": "2.0", "id": 2, "result": None}
    send(server, "toolgate/ping", {}, msg_id=3)
    assert out.messages[-1]["error"] == {"code": -32600, "message": "The server is shutting down."}
    assert server.exit_status is None
    send(server, "exit")
    assert server.exit_status == 0


def test_exit_without_shutdown_ends_with_1(tmp_path: Path) -> None:
    server, _out = serving()
    send(server, "initialize", initialize_params(tmp_path), msg_id=1)
    send(server, "exit")
    assert server.exit_status == 1  # LSP: the client did not ask to shut down first


def test_text_sync_notifications_reach_the_document_mirror(tmp_path: Path) -> None:
    server, out = serving()
    path = tmp_path / "a.txt"
    path.write_text("one\ntwo\n")
    uri = path.as_uri()
    send(server, "initialize", initialize_params(tmp_path / "storage"), msg_id=1)
    send(
        server,
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "x", "version": 1, "text": "one\ntwo\n"}},
    )
    assert not server.documents.is_dirty(path)
    edit = {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 3}}, "text": "TWO"}
    send(server, "textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [edit]})
    assert server.documents.text(path) == "one\nTWO\n" and server.documents.is_dirty(path)
    send(server, "textDocument/didClose", {"textDocument": {"uri": uri}})
    assert server.documents.text(path) is None
    assert len(out.messages) == 1  # notifications get no answer


def test_text_sync_before_initialize_counts_positions_in_utf16(tmp_path: Path) -> None:
    # pygls's workspace (which holds the negotiated encoding) exists only after initialize.
    server, out = serving()
    path = tmp_path / "a.txt"
    path.write_text("😀x\n")
    uri = path.as_uri()
    send(
        server, "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "x", "version": 1, "text": "😀x\n"}}
    )
    at = {"line": 0, "character": 2}  # after the emoji: two UTF-16 units
    edit = {"range": {"start": at, "end": at}, "text": "!"}
    send(server, "textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [edit]})
    assert server.documents.text(path) == "😀!x\n" and out.messages == []


def test_a_negotiated_utf8_encoding_counts_positions_in_bytes(tmp_path: Path) -> None:
    server, _out = serving()
    send(server, "initialize", initialize_params(tmp_path, encodings=("utf-8", "utf-16")), msg_id=1)
    path = tmp_path / "a.txt"
    path.write_text("é😀x\n")
    uri = path.as_uri()
    send(
        server,
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "x", "version": 1, "text": "é😀x\n"}},
    )
    at = {"line": 0, "character": 6}  # é is 2 bytes, the emoji 4
    edit = {"range": {"start": at, "end": at}, "text": "!"}
    send(server, "textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [edit]})
    assert server.documents.text(path) == "é😀!x\n"
