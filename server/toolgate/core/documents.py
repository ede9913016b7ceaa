"""What the editor holds open. The file tools refuse to write a file whose editor buffer has unsaved changes.

Headless sessions have no editor, so the default store is empty; the sidecar replaces it with a mirror fed
by standard LSP text document sync (didOpen / didChange / didSave / didClose).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from toolgate.core.deps import Dep


class OpenDocuments(Protocol):
    def is_dirty(self, path: Path) -> bool:
        """True when the editor has unsaved changes for `path` (an absolute, normalised path)."""
        ...

    def text(self, path: Path) -> str | None:
        """The editor's current text for `path`, or None when it is not open."""
        ...


class NoDocuments:
    def is_dirty(self, path: Path) -> bool:
        return False

    def text(self, path: Path) -> str | None:
        return None


OPEN_DOCUMENTS: Dep[OpenDocuments] = Dep("open_documents", lambda _r: NoDocuments())
