"""The open-document mirror: what counts as a dirty buffer."""

from __future__ import annotations

import json
from pathlib import Path

from toolgate.sidecar.documents import EditorDocuments
from toolgate.text.document_sync import Change


def test_a_clean_open_buffer_is_not_dirty(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    docs = EditorDocuments()
    docs.opened(path.as_uri(), "one\n")
    assert not docs.is_dirty(path)
    assert docs.text(path) == "one\n"


def test_an_edit_makes_it_dirty_until_saved_or_undone(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("one\n")
    docs = EditorDocuments()
    docs.opened(path.as_uri(), "one\n")
    docs.edited(path.as_uri(), [Change("one, edited\n")])
    assert docs.is_dirty(path)
    docs.edited(path.as_uri(), [Change("one\n")])  # undone back to what is on disk
    assert not docs.is_dirty(path)
    docs.edited(path.as_uri(), [Change("two\n")])
    path.write_text("two\n")
    docs.saved(path.as_uri())
    assert not docs.is_dirty(path)


def test_a_write_the_editor_has_not_reloaded_yet_is_not_a_dirty_buffer(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    docs = EditorDocuments()
    docs.opened(path.as_uri(), "old\n")
    path.write_text("written by a tool\n")
    assert not docs.is_dirty(path)  # buffer and disk differ, but nobody typed anything
    docs.edited(path.as_uri(), [Change("written by a tool\n")])  # the editor reloads the file
    assert not docs.is_dirty(path)


def test_a_buffer_that_differs_from_disk_when_opened_is_unsaved_work(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("on disk\n")
    docs = EditorDocuments()
    docs.opened(path.as_uri(), "restored unsaved work\n")
    assert docs.is_dirty(path)


def test_a_buffer_for_a_missing_file_is_dirty(tmp_path: Path) -> None:
    path = tmp_path / "new.txt"
    docs = EditorDocuments()
    docs.opened(path.as_uri(), "typed but never saved")
    assert docs.is_dirty(path)


def test_line_endings_and_bom_do_not_count_as_changes(tmp_path: Path) -> None:
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    docs = EditorDocuments()
    docs.opened(path.as_uri(), "one\r\ntwo\r\n")
    docs.edited(path.as_uri(), [Change("one\r\ntwo\r\n")])
    assert not docs.is_dirty(path)


def test_closing_forgets_the_buffer_and_aliases_share_one(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x\n")
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    docs = EditorDocuments()
    docs.opened(path.as_uri(), "x\n")
    docs.edited(path.as_uri(), [Change("y\n")])
    assert docs.is_dirty(link)
    docs.closed(path.as_uri())
    assert not docs.is_dirty(path) and docs.text(path) is None


def test_untitled_buffers_are_ignored(tmp_path: Path) -> None:
    docs = EditorDocuments()
    docs.opened("untitled:Untitled-1", "scratch")
    docs.edited("untitled:Untitled-1", [Change("scratch 2")])
    assert docs.open_paths() == []


def write_notebook(path: Path, *sources: str | list[str]) -> None:
    cells = [{"cell_type": "code", "metadata": {}, "source": source, "outputs": []} for source in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


def test_a_notebook_edited_in_the_editor_is_dirty_until_saved_or_reloaded_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    write_notebook(path, ["a = 1\n", "b = 2"])  # sources on disk may be lists of lines
    uri = path.as_uri()
    docs = EditorDocuments()
    docs.notebook_synced(uri, ["a = 1\nb = 2"], opened=True)
    assert not docs.is_dirty(path)
    docs.notebook_synced(uri, ["a = 1\nb = 3"])
    assert docs.is_dirty(path)
    write_notebook(path, "a = 1\nb = 3")
    docs.notebook_synced(uri, ["a = 1\nb = 3"], saved=True)
    assert not docs.is_dirty(path)
    write_notebook(path, "written by a tool")  # the editor reloads it: a change, equal to the disk
    docs.notebook_synced(uri, ["written by a tool"])
    assert not docs.is_dirty(path)
    path.write_text("not a notebook")  # unreadable on disk: what the editor holds is unsaved work
    docs.notebook_synced(uri, ["edited"])
    assert docs.is_dirty(path)
    docs.notebook_closed(uri)
    assert not docs.is_dirty(path)


def test_a_notebook_that_differs_from_disk_when_opened_is_unsaved_work(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    write_notebook(path, "x")
    docs = EditorDocuments()
    docs.notebook_synced(path.as_uri(), ["restored, unsaved"], opened=True)
    assert docs.is_dirty(path)
