"""The changes bar's methods over stdio: toolgate/changes/list|keep|undo|without on a real sidecar, with the
agent's change made by Bash and the person's edits made between and after."""

from __future__ import annotations

from pathlib import Path

from tests.integration.sidecar_client import SidecarClient, use

from toolgate.sidecar import protocol as p
from toolgate.sidecar import protocol_changes as c


async def test_the_bar_lists_undoes_per_hunk_and_per_file_and_keeps(sidecar: SidecarClient, workspace: Path) -> None:
    code, notes = workspace / "code.txt", workspace / "notes.md"
    code.write_text("a\nb\nc\nd\ne\nf\ng\n")
    notes.write_text("mine\n")
    session_id = await sidecar.new_session(workspace, mode="bypassPermissions")
    await sidecar.run(
        session_id, use("Bash", command="sed -i 's/^b$/B/; s/^f$/F/' code.txt && printf 'n\\n' > new.txt")
    )
    notes.write_text("mine\nmore\n")  # the person's, after the call
    ref = {"sessionId": session_id}

    listing = await sidecar.call(c.CHANGES_LIST, ref)
    files = {f["path"]: f for f in listing["files"]}
    assert listing["enabled"] is True and set(files) == {"code.txt", "new.txt"}
    assert (files["code.txt"]["added"], files["code.txt"]["removed"], files["new.txt"]["status"]) == (2, 2, "created")
    without = await sidecar.call(c.CHANGES_WITHOUT, {**ref, "path": "code.txt"})
    assert without == {"exists": True, "content": "a\nb\nc\nd\ne\nf\ng\n", "binary": False}

    second = files["code.txt"]["hunks"][1]
    undone = await sidecar.call(c.CHANGES_UNDO, {**ref, "path": "code.txt", "hunk": second})
    assert undone["undone"] is True and undone["redo"] is not None
    assert code.read_text() == "a\nB\nc\nd\ne\nf\ng\n"

    code.write_text("a\nB, reworded by the person\nc\nd\ne\nf\ng\n")
    listing = await sidecar.call(c.CHANGES_LIST, ref)
    conflicted = next(f for f in listing["files"] if f["path"] == "code.txt")
    assert conflicted["conflict"] is not None and conflicted["hunks"] == []
    every = await sidecar.call(c.CHANGES_UNDO, ref)
    assert every["files"] == ["new.txt"] and [x["path"] for x in every["conflicts"]] == ["code.txt"]
    assert not (workspace / "new.txt").exists() and code.read_text() == "a\nB, reworded by the person\nc\nd\ne\nf\ng\n"
    assert notes.read_text() == "mine\nmore\n"

    kept = await sidecar.call(c.CHANGES_KEEP, {**ref, "path": "code.txt"})
    assert kept["files"] == [] and code.read_text() == "a\nB, reworded by the person\nc\nd\ne\nf\ng\n"

    redo = await sidecar.call(p.CHECKPOINTS_RESTORE, {**ref, "checkpointId": every["redo"]})
    assert redo["restored"] is True and (workspace / "new.txt").read_text() == "n\n"
