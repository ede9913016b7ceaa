"""The editor's open documents, mirrored from standard LSP text sync, so writes can refuse dirty buffers.

"Dirty" means what the editor means: the buffer holds changes that are not on disk. A buffer is dirty
when it was edited since it was opened or saved *and* its text differs from the file on disk. Both halves
matter: right after a tool writes a file that is open and clean, the editor has not reloaded it yet, so
buffer and disk differ for a moment without any edit (not dirty); and when the editor reloads the file
it sends a change equal to the disk (not dirty either). A buffer that differs from the disk when it is
opened (restored unsaved work after the sidecar restarted) counts as edited.

One mirror serves every session: there is one editor.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pygls.uris import to_fs_path

from toolgate.text.encoding import UndecodableError, decode

logger = logging.getLogger("toolgate.sidecar.documents")


@dataclass(slots=True)
class _Buffer:
    uri: str
    text: str
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

    # --- fed by the LSP handlers --------------------------------------------------------------------------
    def opened(self, uri: str, text: str) -> None:
        key = self._path_key(uri)
        if key is not None:
            buffer = _Buffer(uri, text, edited=False)
            buffer.edited = self._differs_from_disk(Path(key), text)
            self._buffers[key] = buffer

    def changed(self, uri: str, text: str) -> None:
        key = self._path_key(uri)
        if key is not None:
            self._buffers[key] = _Buffer(uri, text, edited=True)

    def saved(self, uri: str, text: str | None = None) -> None:
        buffer = self._by_uri(uri)
        if buffer is not None:
            buffer.edited = False
            if text is not None:
                buffer.text = text

    def closed(self, uri: str) -> None:
        key = self._path_key(uri)
        if key is not None:
            self._buffers.pop(key, None)

    # --- OpenDocuments ----------------------------------------------------------------------------------------
    def is_dirty(self, path: Path) -> bool:
        buffer = self._buffers.get(_key(path))
        return buffer is not None and buffer.edited and self._differs_from_disk(path, buffer.text)

    def text(self, path: Path) -> str | None:
        buffer = self._buffers.get(_key(path))
        return buffer.text if buffer is not None else None

    def open_paths(self) -> list[str]:
        return sorted(self._buffers)

    # --- helpers ------------------------------------------------------------------------------------------------
    def _path_key(self, uri: str) -> str | None:
        path = to_fs_path(uri)
        if path is None:
            return None  # untitled buffers, other schemes: no file on disk to protect
        return _key(path)

    def _by_uri(self, uri: str) -> _Buffer | None:
        key = self._path_key(uri)
        return self._buffers.get(key) if key is not None else None

    def _differs_from_disk(self, path: Path, text: str) -> bool:
        data = self._read_disk(path)
        if data is None:
            return True  # the buffer holds text for a file that is gone (or unreadable): unsaved work
        try:
            on_disk = decode(data).text
        except UndecodableError:
            return True
        return on_disk != text.replace("\r\n", "\n")
