"""What pygls's LSP handling gives the sidecar beyond text sync, over real stdio: notebook document sync (a notebook
with unsaved changes in the notebook editor is not overwritten) and workspace folders changed while it runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.integration.sidecar_client import SidecarClient, use

from toolgate.sidecar import protocol as p


def notebook_file(path: Path, *sources: str) -> None:
    cells = [
        {"cell_type": "code", "id": f"c{n}", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
        for n, s in enumerate(sources)
    ]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


async def accept(_params: dict[str, Any]) -> dict[str, Any]:
    return {"decision": "accept"}


async def test_a_notebook_dirty_in_the_notebook_editor_is_not_overwritten(
    sidecar: SidecarClient, workspace: Path
) -> None:
    target = workspace / "nb.ipynb"
    notebook_file(target, "x = 1")
    uri, cell = target.as_uri(), f"vscode-notebook-cell:{target}#c0"
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_review = accept
    await sidecar.run(session_id, use("Read", file_path="nb.ipynb"))
    sidecar.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            types.NotebookDocument(uri, "jupyter-notebook", 1, [types.NotebookCell(types.NotebookCellKind.Code, cell)]),
            [types.TextDocumentItem(cell, "python", 1, "x = 1")],
        )
    )
    typed = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(0, 4), types.Position(0, 5)), text="2"
    )
    sidecar.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            types.VersionedNotebookDocumentIdentifier(2, uri),
            types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            types.VersionedTextDocumentIdentifier(2, cell), [typed]
                        )
                    ]
                )
            ),
        )
    )
    edit = use("NotebookEdit", notebook_path="nb.ipynb", cell_id="c0", new_source="y = 3")
    [refused] = await sidecar.run(session_id, edit)
    assert refused["is_error"] is True and "unsaved changes in the editor" in refused["content"], refused
    assert json.loads(target.read_text())["cells"][0]["source"] == "x = 1"

    notebook_file(target, "x = 2")  # the editor saves ...
    sidecar.notebook_document_did_save(types.DidSaveNotebookDocumentParams(types.NotebookDocumentIdentifier(uri)))
    await sidecar.run(session_id, use("Read", file_path="nb.ipynb"))  # ... so the model reads it again
    [written] = await sidecar.run(session_id, edit)
    assert written["is_error"] is False, written
    assert json.loads(target.read_text())["cells"][0]["source"] == "y = 3"


async def test_a_folder_added_to_the_workspace_is_a_working_directory_of_new_sessions(
    sidecar: SidecarClient, workspace: Path, tmp_path: Path
) -> None:
    added = tmp_path / "second"
    added.mkdir()
    (added / "notes.txt").write_text("notes\n")
    before = await sidecar.new_session(workspace)
    read = {"tool": "Read", "input": {"file_path": str(added / "notes.txt")}}
    assert (await sidecar.call(p.PERMISSIONS_CHECK, {"sessionId": before, **read}))["decision"] == "ask"

    event = types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(added.as_uri(), "second")], removed=[])
    sidecar.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(event))
    after = await sidecar.new_session(workspace)
    assert (await sidecar.call(p.PERMISSIONS_CHECK, {"sessionId": after, **read}))["decision"] == "allow"
    # The session that was open keeps its working directories (it is told, with its next message).
    assert (await sidecar.call(p.PERMISSIONS_CHECK, {"sessionId": before, **read}))["decision"] == "ask"
