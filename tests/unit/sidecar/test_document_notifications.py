"""The four LSP text-sync notifications, as the editor's language client sends them, through pygls to the mirror."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol.types import (
    TEXT_DOCUMENT_DID_CHANGE as DID_CHANGE,
)
from lsprotocol.types import (
    TEXT_DOCUMENT_DID_CLOSE as DID_CLOSE,
)
from lsprotocol.types import (
    TEXT_DOCUMENT_DID_OPEN as DID_OPEN,
)
from lsprotocol.types import (
    TEXT_DOCUMENT_DID_SAVE as DID_SAVE,
)
from tests.unit.sidecar.in_process import text_sync


def did_open(uri: str, text: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}


def did_change(uri: str, *changes: dict[str, Any], version: int = 2) -> dict[str, Any]:
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": list(changes)}


def edit(sl: int, sc: int, el: int, ec: int, text: str) -> dict[str, Any]:
    # rangeLength is deprecated but VS Code still sends it; it is not read
    return {"range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}, "text": text}


def test_open_edit_save_close(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\ny = 😀\n")
    uri = path.as_uri()
    docs, handle = text_sync()
    handle(DID_OPEN, did_open(uri, "x = 1\ny = 😀\n"))
    assert not docs.is_dirty(path)
    change = {**edit(1, 6, 1, 6, "🎉"), "rangeLength": 0}  # after the emoji: 2 UTF-16 units in
    handle(DID_CHANGE, did_change(uri, change, edit(0, 4, 0, 5, "42")))
    assert docs.text(path) == "x = 42\ny = 😀🎉\n"
    assert docs.is_dirty(path)
    handle(DID_CHANGE, did_change(uri, edit(1, 6, 1, 8, ""), edit(0, 4, 0, 6, "1"), version=3))
    assert not docs.is_dirty(path)  # typed back to what is on disk
    handle(DID_CHANGE, did_change(uri, edit(2, 0, 2, 0, "z = 3\n")))
    assert docs.is_dirty(path)
    path.write_text("x = 1\ny = 😀\nz = 3\n")  # the editor saves
    handle(DID_SAVE, {"textDocument": {"uri": uri}})
    assert not docs.is_dirty(path)
    handle(DID_CLOSE, {"textDocument": {"uri": uri}})
    assert docs.open_paths() == [] and docs.text(path) is None


def test_a_whole_text_change_and_a_save_with_text(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    docs, handle = text_sync()
    handle(DID_OPEN, did_open(path.as_uri(), "one\n"))
    handle(DID_CHANGE, did_change(path.as_uri(), {"text": "two\n"}))
    assert docs.text(path) == "two\n" and docs.is_dirty(path)
    path.write_text("three\n")
    handle(DID_SAVE, {"textDocument": {"uri": path.as_uri()}, "text": "three\n"})
    assert docs.text(path) == "three\n" and not docs.is_dirty(path)


def test_unknown_keys_are_ignored_but_names_are_camel_case(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("a\n")
    docs, handle = text_sync()
    params = did_open(path.as_uri(), "a\n")
    params["textDocument"]["someFutureField"] = {"x": 1}
    params["workDoneToken"] = "t"
    handle(DID_OPEN, params)
    assert docs.open_paths() == [str(path)]
    # snake_case is Python's spelling, not the wire's: such a change is invalid, not applied
    snake = {"text_document": {"uri": path.as_uri()}, "content_changes": [{"text": "b\n"}]}
    handle(DID_CHANGE, snake)
    assert docs.text(path) != "b\n"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        (DID_OPEN, None),
        (DID_OPEN, []),
        (DID_OPEN, {"textDocument": {"uri": "file:///a"}}),  # no text
        (DID_OPEN, {"textDocument": {"uri": 7, "text": "x"}}),
        (DID_SAVE, {"textDocument": {}}),
        (DID_CLOSE, "file:///a"),
        (DID_CHANGE, {"textDocument": {"uri": "file:///a"}}),  # no contentChanges
    ],
)
def test_invalid_params_are_logged_and_ignored(
    method: str, params: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("a\n")
    docs, handle = text_sync()
    handle(DID_OPEN, did_open(path.as_uri(), "a\n"))
    with caplog.at_level(logging.WARNING, logger="toolgate.sidecar.documents"):
        handle(method, params)  # it was one of ours; nothing raised
    # Params that are no object or array are refused by the envelope, before pygls reads them.
    said = "refused a message" if isinstance(params, str) else f"{method} notification with params that cannot be read"
    assert [r.getMessage() for r in caplog.records if method in r.getMessage() and said in r.getMessage()]
    assert docs.open_paths() == [str(path)] and docs.text(path) == "a\n" and not docs.is_dirty(path)


@pytest.mark.parametrize(
    "bad_change",
    [
        edit(-1, 0, 0, 0, "x"),  # LSP positions are uintegers
        edit(0, "1", 0, 1, "x"),  # type: ignore[arg-type]
        edit(0, 1.5, 0, 1, "x"),  # type: ignore[arg-type]
        {"range": {"start": {"line": 0, "character": 0}}, "text": "x"},
        {"range": None},
    ],
)
def test_a_change_that_cannot_be_applied_fails_closed_until_the_editor_saves(
    bad_change: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    uri = path.as_uri()
    docs, handle = text_sync()
    handle(DID_OPEN, did_open(uri, "one\r\ntwo\r\n"))
    handle(DID_CHANGE, did_change(uri, edit(0, 0, 0, 0, "ok "), bad_change))
    # the buffer's text is unknown now: it counts as unsaved work (writes refuse), nothing made up
    assert docs.is_dirty(path) and docs.text(path) is None
    handle(DID_CHANGE, did_change(uri, edit(0, 0, 0, 0, "more ")))
    assert docs.is_dirty(path) and docs.text(path) is None  # an edit to an unknown text is still unknown
    path.write_bytes(b"saved\r\ntwo\r\n")
    handle(DID_SAVE, {"textDocument": {"uri": uri}})
    assert not docs.is_dirty(path)
    assert docs.text(path) == "saved\r\ntwo\r\n"  # read back from disk, line endings as the editor has them
    handle(DID_CHANGE, did_change(uri, edit(1, 3, 1, 3, "!")))
    assert docs.text(path) == "saved\r\ntwo!\r\n" and docs.is_dirty(path)


def test_a_whole_text_change_puts_an_unknown_buffer_back_in_step(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("disk\n")
    uri = path.as_uri()
    docs, handle = text_sync()
    handle(DID_OPEN, did_open(uri, "disk\n"))
    handle(DID_CHANGE, did_change(uri, edit(0, -5, 0, 0, "x")))
    assert docs.text(path) is None
    handle(DID_CHANGE, did_change(uri, edit(0, 0, 0, 0, "lost"), {"text": "whole\n"}, edit(0, 5, 0, 5, "!")))
    assert docs.text(path) == "whole!\n" and docs.is_dirty(path)
    handle(DID_CHANGE, did_change(uri, {"text": "disk\n"}))
    assert not docs.is_dirty(path)


def test_an_unknown_buffer_whose_file_cannot_be_read_stays_dirty_after_a_save(tmp_path: Path) -> None:
    path = tmp_path / "gone.txt"
    path.write_text("x")
    docs, handle = text_sync()
    handle(DID_OPEN, did_open(path.as_uri(), "x"))
    handle(DID_CHANGE, did_change(path.as_uri(), {"text": 5}))
    path.unlink()
    handle(DID_SAVE, {"textDocument": {"uri": path.as_uri()}})
    assert docs.is_dirty(path) and docs.text(path) is None


def test_edits_to_a_document_never_opened_are_logged_once_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "a.txt"
    path.write_text("a\n")
    docs, handle = text_sync()
    with caplog.at_level(logging.WARNING, logger="toolgate.sidecar.documents"):
        for _ in range(3):
            handle(DID_CHANGE, did_change(path.as_uri(), edit(0, 0, 0, 0, "x")))
    assert len([r for r in caplog.records if "never opened" in r.getMessage()]) == 1
    assert docs.open_paths() == [] and not docs.is_dirty(path)
    handle(DID_OPEN, did_open(path.as_uri(), "a\n"))  # once open, edits apply
    handle(DID_CHANGE, did_change(path.as_uri(), edit(0, 0, 0, 0, "x")))
    assert docs.text(path) == "xa\n"


def test_documents_that_are_not_local_files_are_not_mirrored(caplog: pytest.LogCaptureFixture) -> None:
    docs, handle = text_sync()
    with caplog.at_level(logging.WARNING, logger="toolgate.sidecar.documents"):
        for uri in ("untitled:Untitled-1", "vscode-notebook-cell:/nb.ipynb#c1", "file://elsewhere/a.txt"):
            handle(DID_OPEN, did_open(uri, "x"))
            handle(DID_CHANGE, did_change(uri, edit(0, 0, 0, 0, "y")))
            handle(DID_SAVE, {"textDocument": {"uri": uri}})
            handle(DID_CLOSE, {"textDocument": {"uri": uri}})
    assert docs.open_paths() == []
    assert not caplog.records  # nothing to warn about: there is no file to protect


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
# Shapes close to valid ones, so that validation gets deep before it fails (or passes with odd values).
position = st.fixed_dictionaries({"line": json_values | st.integers(0, 3), "character": json_values | st.integers()})
near_valid = st.fixed_dictionaries(
    {
        "textDocument": st.fixed_dictionaries({"uri": st.sampled_from(["file:///tmp/x", "untitled:1"]) | json_values}),
        "contentChanges": st.lists(
            st.fixed_dictionaries(
                {"text": st.text(max_size=4) | json_values},
                optional={"range": st.fixed_dictionaries({"start": position, "end": position}) | json_values},
            ),
            max_size=3,
        ),
    }
)


@settings(max_examples=300)
@given(st.sampled_from([DID_OPEN, DID_CHANGE, DID_SAVE, DID_CLOSE]), json_values | near_valid)
def test_no_params_make_a_notification_raise(method: str, params: Any) -> None:
    _docs, handle = text_sync(read_disk=lambda _path: b"")  # nothing on this machine is read
    failures = Failures()
    logging.getLogger("toolgate.sidecar").addHandler(failures)
    try:
        handle(DID_OPEN, did_open("file:///tmp/x", "line\n"))
        handle(method, json.loads(json.dumps(params)))
    finally:
        logging.getLogger("toolgate.sidecar").removeHandler(failures)
    # A handler that raised is logged as an error (by the protocol's catch-all, or its report_server_error).
    assert failures.records == []


class Failures(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())
