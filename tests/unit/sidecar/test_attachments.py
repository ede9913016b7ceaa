"""Attachments → the text blocks the model reads, and what they record in readFileState."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolgate.core.file_state import ReadFileState
from toolgate.sidecar import attachments
from toolgate.sidecar.attachments import attachment_blocks
from toolgate.sidecar.protocol_composer import Attachment


class Buffers:
    """The editor's open documents: `dirty` maps a path to its unsaved text."""

    def __init__(self, dirty: dict[Path, str] | None = None) -> None:
        self.dirty = dirty or {}

    def is_dirty(self, path: Path) -> bool:
        return path in self.dirty

    def text(self, path: Path) -> str | None:
        return self.dirty.get(path)


def attach(workspace: Path, *items: Attachment, buffers: Buffers | None = None) -> tuple[list[str], ReadFileState]:
    state = ReadFileState()
    blocks = attachment_blocks(items, workspace=workspace, documents=buffers or Buffers(), file_state=state)
    return [block.text for block in blocks], state


def file(path: Path, **extra: Any) -> Attachment:
    return Attachment(kind="file", path=str(path), **extra)


def selection(path: Path, start: int, end: int) -> Attachment:
    return Attachment(kind="selection", path=str(path), start_line=start, end_line=end)


def test_a_whole_clean_file_is_a_numbered_block_and_a_full_read(tmp_path: Path) -> None:
    target = tmp_path / "src" / "app.py"
    target.parent.mkdir()
    target.write_text("a = 1\nb = 2\n")
    [text], state = attach(tmp_path, file(target))
    assert text == "The person attached src/app.py, the whole file:\n1\ta = 1\n2\tb = 2"
    record = state.get(target)
    assert record is not None and record.full and record.content == "a = 1\nb = 2\n"
    assert record.mtime_ns == target.stat().st_mtime_ns and record.file_size == target.stat().st_size


def test_a_selection_names_its_lines_and_is_a_partial_read(tmp_path: Path) -> None:
    target = tmp_path / "m.ts"
    target.write_text("one\ntwo\nthree\nfour\n")
    [text], state = attach(tmp_path, selection(target, 2, 3))
    assert text == "The person attached m.ts, lines 2-3 of 4:\n2\ttwo\n3\tthree"
    record = state.get(target)
    assert record is not None and not record.full and (record.offset, record.limit) == (2, 2)
    assert record.content == "two\nthree"


def test_a_selection_of_every_line_counts_as_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "m.ts"
    target.write_text("one\ntwo\n")
    [text], state = attach(tmp_path, selection(target, 1, 9))
    assert "the whole file" in text
    record = state.get(target)
    assert record is not None and record.full


def test_a_dirty_file_shows_the_editors_text_and_is_not_recorded(tmp_path: Path) -> None:
    target = tmp_path / "d.py"
    target.write_text("on disk\n")
    [text], state = attach(tmp_path, file(target), buffers=Buffers({target: "in the editor\r\nline 2\n"}))
    assert "1\tin the editor\n2\tline 2" in text
    assert "unsaved text; the file on disk differs" in text
    assert target not in state


def test_a_long_file_is_capped_and_says_how_to_read_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attachments, "MAX_ATTACHED_LINES", 3)
    target = tmp_path / "long.txt"
    target.write_text("".join(f"line {n}\n" for n in range(1, 11)))
    [text], state = attach(tmp_path, file(target))
    assert text.startswith("The person attached long.txt, lines 1-3 of 10:\nOnly lines 1-3 are attached")
    assert "offset=4" in text and text.endswith("3\tline 3")
    record = state.get(target)
    assert record is not None and not record.full and record.limit == 3


def test_a_byte_cap_stops_at_a_whole_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attachments, "MAX_ATTACHED_FILE_BYTES", 25)
    target = tmp_path / "wide.txt"
    target.write_text("0123456789\n" * 5)
    [text], _ = attach(tmp_path, file(target))
    assert "lines 1-2 of 5" in text and "offset=3" in text


def test_unreadable_binary_and_missing_files_say_why(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "empty.txt").write_text("")
    texts, state = attach(
        tmp_path, file(tmp_path / "blob.bin"), file(tmp_path / "gone.txt"), file(tmp_path / "empty.txt")
    )
    assert "binary file" in texts[0]
    assert texts[1].startswith("The person attached gone.txt, but it could not be read: No such file")
    assert texts[2] == "The person attached empty.txt: the file is empty."
    assert len(state) == 0


def test_a_folder_attaches_its_listing_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attachments, "MAX_FOLDER_ENTRIES", 2)
    folder = tmp_path / "pkg"
    (folder / "sub").mkdir(parents=True)
    (folder / ".git").mkdir()
    for name in ("b.py", "a.py"):
        (folder / name).write_text("")
    [text], _ = attach(tmp_path, Attachment(kind="folder", path=str(folder)))
    header = "The person attached the folder pkg; its entries (showing 2 of 3 entries: use Glob for the rest):"
    assert text == f"{header}\na.py\nb.py"


def test_the_problems_the_caller_listed_take_their_place_and_are_redacted(tmp_path: Path) -> None:
    # The listing is the sidecar's own (attached_problems.py); a message may still quote a secret from the code.
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    (tmp_path / "a.txt").write_text("a\n")
    listed = {"": f"The person attached the editor's problems:\n1 problem in the workspace:\nx.ts:1:1 error: {key}"}
    items = [file(tmp_path / "a.txt"), Attachment(kind="problems")]
    blocks = attachment_blocks(
        items, workspace=tmp_path, documents=Buffers(), file_state=ReadFileState(), problems=listed
    )
    assert blocks[0].text.startswith("The person attached a.txt")
    assert blocks[1].text.startswith("The person attached the editor's problems:\n1 problem in the workspace:\n")
    assert key not in blocks[1].text and "toolgate redacted 1 secret value" in blocks[1].text


def test_an_attachment_without_what_it_needs_is_refused() -> None:
    with pytest.raises(ValueError, match="needs its path"):
        Attachment(kind="file")
    with pytest.raises(ValueError, match="startLine and endLine"):
        Attachment(kind="selection", path="/x", start_line=1)
    with pytest.raises(ValueError, match="before startLine"):
        Attachment(kind="selection", path="/x", start_line=5, end_line=2)


def test_a_secret_in_an_attached_file_is_redacted_with_a_note(tmp_path: Path) -> None:
    # The person chose the file, but its keys still must not reach the provider (as from any tool result).
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    target = tmp_path / "deploy.sh"
    target.write_text(f"export GITHUB_TOKEN={key}\necho done\n")
    [text], _ = attach(tmp_path, file(target))
    assert key not in text
    assert "toolgate redacted 1 secret value" in text and "deploy.sh" in text


def test_an_attachment_the_rules_deny_is_named_and_not_read(tmp_path: Path) -> None:
    target = tmp_path / "private.txt"
    target.write_text("do not send\n")
    state = ReadFileState()
    refused = {str(target): "the rule Read(private.txt) denies it"}
    [block] = attachment_blocks(
        [file(target)], workspace=tmp_path, documents=Buffers(), file_state=state, refused=refused
    )
    assert "do not send" not in block.text
    assert block.text == (
        "The person attached private.txt, but it is not shown: the rules deny reading it "
        "(the rule Read(private.txt) denies it)."
    )
    assert state.get(target) is None  # not read, so not "read" for an Edit either
