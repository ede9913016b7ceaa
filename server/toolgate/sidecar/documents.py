"""The editor's open documents, mirrored from standard LSP text sync, so writes can refuse dirty buffers.

"Dirty" means what the editor means: the buffer holds changes that are not on disk. A buffer is dirty
when it was edited since it was opened or saved *and* its text differs from the file on disk. Both halves
matter: right after a tool writes a file that is open and clean, the editor has not reloaded it yet, so
buffer and disk differ for a moment without any edit (not dirty); and when the editor reloads the file
it sends a change equal to the disk (not dirty either). A buffer that differs from the disk when it is
opened (restored unsaved work after the sidecar restarted) counts as edited.

The text is kept in step by applying the editor's incremental changes (`toolgate.text.document_sync`, by the LSP
line rule; pygls hands over each notification as lsprotocol types, see `lsp_protocol`). When a change cannot be
read, the mirror no longer knows the buffer's text: it fails closed and counts the buffer as dirty until the editor
sends its whole text again (reopening it, a change without a range) or saves it (then the buffer is what is on
disk, and the text is read from there).

Notebooks open in the notebook editor are synced as LSP notebook documents (pygls keeps their cells): a notebook
is dirty when it was edited since it was opened or saved *and* its cells' sources differ from the `.ipynb` on disk,
for the same two reasons as a text buffer (the editor reloads a notebook a tool wrote with a change of its own).

One mirror serves every session: there is one editor.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgate.text.document_sync import UTF16, Change, apply_changes
from toolgate.text.encoding import UndecodableError, decode, decode_raw
from toolgate.text.uris import file_uri_to_path

logger = logging.getLogger("toolgate.sidecar.documents")


@dataclass(slots=True)
class _Notebook:
    cells: list[str]  # each cell's source, in order
    edited: bool


@dataclass(slots=True)
class _Buffer:
    uri: str
    text: str | None  # None: out of step with the editor (a change could not be applied)
    edited: bool


def _read_disk(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _key(path: Path | str) -> str:
    return os.path.realpath(path)


class EditorDocuments:
    """Implements `toolgate.core.documents.OpenDocuments` from didOpen/didChange/didSave/didClose."""

    def __init__(self, read_disk: Callable[[Path], bytes | None] = _read_disk) -> None:
        self._read_disk = read_disk
        self._buffers: dict[str, _Buffer] = {}
        self._notebooks: dict[str, _Notebook] = {}
        self._warned: set[str] = set()  # URIs edited while not open, already logged (an edit per keystroke)

    # --- fed by the LSP handlers --------------------------------------------------------------------------
    def opened(self, uri: str, text: str) -> None:
        key = self._path_key(uri)
        if key is not None:
            buffer = _Buffer(uri, text, edited=False)
            buffer.edited = self._differs_from_disk(Path(key), text)
            self._buffers[key] = buffer
            self._warned.discard(uri)

    def edited(self, uri: str, changes: Sequence[Change], encoding: str = UTF16) -> None:
        """Apply the editor's changes (incremental or whole-text) to the mirrored buffer, which is now edited.
        `encoding`: how positions count characters (negotiated at initialize; a `document_sync.ENCODINGS` key)."""
        buffer = self._by_uri(uri)
        if buffer is None:
            if self._path_key(uri) is not None and uri not in self._warned:
                self._warned.add(uri)
                logger.warning("ignored changes to %s, which the editor never opened (further ones unlogged)", uri)
            return
        buffer.edited = True
        text = buffer.text
        if text is None:  # out of step: only a whole new text puts it back in step
            whole = [n for n, change in enumerate(changes) if change.range is None]
            if not whole:
                return
            text, changes = changes[whole[-1]].text, changes[whole[-1] + 1 :]
        buffer.text = apply_changes(text, changes, encoding)

    def saved(self, uri: str, text: str | None = None) -> None:
        buffer = self._by_uri(uri)
        if buffer is not None:
            buffer.edited = False
            if text is not None:
                buffer.text = text
            elif buffer.text is None:  # out of step: the buffer was just written to disk, so read it there
                buffer.text = self._disk_text(Path(self._path_key(uri) or ""))
                buffer.edited = buffer.text is None  # unreadable: still unknown, still dirty

    def closed(self, uri: str) -> None:
        key = self._path_key(uri)
        if key is not None:
            self._buffers.pop(key, None)

    # --- fed by the notebook handlers (the cells' sources, as pygls keeps them) -------------------------------
    def notebook_synced(self, uri: str, cells: list[str], *, opened: bool = False, saved: bool = False) -> None:
        """A notebook was opened, changed or saved in the editor; `cells` is what it holds now."""
        key = self._path_key(uri)
        if key is None:
            return
        notebook = self._notebooks.get(key)
        if opened or notebook is None:
            self._notebooks[key] = _Notebook(cells, edited=self._cells_differ(Path(key), cells))
        else:
            notebook.cells, notebook.edited = cells, not saved

    def notebook_closed(self, uri: str) -> None:
        key = self._path_key(uri)
        if key is not None:
            self._notebooks.pop(key, None)

    def _cells_differ(self, path: Path, cells: list[str]) -> bool:
        data = self._read_disk(path)
        try:
            on_disk = json.loads(data or b"")["cells"]
            sources = [c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in on_disk]
        except (ValueError, TypeError, KeyError):
            return True  # gone, unreadable or no notebook: what the editor holds is unsaved work
        return sources != cells

    # --- OpenDocuments ----------------------------------------------------------------------------------------
    def is_dirty(self, path: Path) -> bool:
        notebook = self._notebooks.get(_key(path))
        if notebook is not None and notebook.edited and self._cells_differ(path, notebook.cells):
            return True
        buffer = self._buffers.get(_key(path))
        if buffer is None or not buffer.edited:
            return False
        return buffer.text is None or self._differs_from_disk(path, buffer.text)

    def text(self, path: Path) -> str | None:
        """The mirrored text; None when not open, or out of step with the editor."""
        buffer = self._buffers.get(_key(path))
        return buffer.text if buffer is not None else None

    def open_paths(self) -> list[str]:
        return sorted(self._buffers)

    # --- helpers ------------------------------------------------------------------------------------------------
    def unreadable(self, method: str, raw_params: Any) -> None:
        """A notification whose params could not be read: a lost change leaves its buffer out of step."""
        logger.warning("ignored a %s notification with params that cannot be read", method)
        document = raw_params.get("textDocument") if isinstance(raw_params, dict) else None
        buffer = self._by_uri(document.get("uri")) if isinstance(document, dict) else None
        if method == "textDocument/didChange" and buffer is not None:
            buffer.text, buffer.edited = None, True
            logger.warning("%s is counted as having unsaved changes until the editor saves or reopens it", buffer.uri)

    def _path_key(self, uri: object) -> str | None:
        path = file_uri_to_path(uri)
        if path is None:
            return None  # untitled buffers, other schemes: no file on disk to protect
        return _key(path)

    def _by_uri(self, uri: object) -> _Buffer | None:
        key = self._path_key(uri)
        return self._buffers.get(key) if key is not None else None

    def _disk_text(self, path: Path) -> str | None:
        """The file's text as the editor holds it (line endings untouched), or None when it cannot be read."""
        data = self._read_disk(path)
        if data is None:
            return None
        try:
            return decode_raw(data)[0]
        except UndecodableError:
            return None

    def _differs_from_disk(self, path: Path, text: str) -> bool:
        data = self._read_disk(path)
        if data is None:
            return True  # the buffer holds text for a file that is gone (or unreadable): unsaved work
        try:
            on_disk = decode(data).text
        except UndecodableError:
            return True
        return on_disk != text.replace("\r\n", "\n")
