"""The editor's workspace beyond its text buffers, as pygls keeps it from LSP: folders added or removed while the
sidecar runs, and notebooks open in the notebook editor (pygls holds their cells; `documents` judges them dirty)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.workspace import Workspace

from toolgate.text.uris import file_uri_to_path


def changed_folders(folders: list[Path], event: types.WorkspaceFoldersChangeEvent) -> tuple[list[Path], str | None]:
    """The workspace folders after `event` (the first stays first: it is where new sessions open by default), and
    what an open session is told of the change (None when no local folder changed)."""
    removed = [Path(path) for folder in event.removed if (path := file_uri_to_path(folder.uri))]
    added = [Path(path) for folder in event.added if (path := file_uri_to_path(folder.uri))]
    kept = [folder for folder in folders if folder not in removed]
    after = kept + [folder for folder in dict.fromkeys(added) if folder not in kept]
    words = [f"The folder {folder} was added to the editor's workspace" for folder in added] + [
        f"The folder {folder} was removed from the editor's workspace" for folder in removed
    ]
    if not words:
        return after, None
    return after, "; ".join(words) + (
        ". Sessions opened from now on have the workspace's folders as working directories; this one keeps its own."
    )


def notebook_sources(workspace: Workspace, uri: str) -> list[str]:
    """Each cell's source, in order, of the notebook open at `uri` (nothing when pygls holds no such notebook)."""
    notebook = workspace.get_notebook_document(notebook_uri=uri)
    cells = [] if notebook is None else notebook.cells
    return [workspace.get_text_document(cell.document).source for cell in cells]
