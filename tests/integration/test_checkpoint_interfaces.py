"""Checkpoints through the real interfaces: `run-tools --session-id` then `checkpoints list` and `rewind` as
processes, and the sidecar's toolgate/checkpoints/list|diff|restore over stdio (unsaved buffers refuse)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.integration.sidecar_client import SidecarClient, use

from toolgate.mockmodel import MockModelServer
from toolgate.sidecar import protocol as p

TOOLGATE = [sys.executable, "-m", "toolgate"]


def _toolgate(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLGATE, *args], input=stdin, capture_output=True, text=True, timeout=120, start_new_session=True
    )


def _line(*uses: dict[str, Any]) -> str:
    return json.dumps([{"type": "tool_use", **u} for u in uses])


def test_a_script_names_its_session_lists_its_checkpoints_and_rewinds_it(tmp_path: Path, workspace: Path) -> None:
    (workspace / "kept.txt").write_text("original\n")
    data = tmp_path / "data"
    session = ("--session-id", "script-1", "--data-dir", str(data))
    lines = [
        _line(use("Write", file_path="made.txt", content="new\n")),
        _line(use("Bash", command="rm kept.txt && mkdir -p out && printf x > out/y")),
    ]
    run = _toolgate(
        "run-tools", "--workspace", str(workspace), "--permission-mode", "bypassPermissions", *session,
        stdin="\n".join(lines) + "\n",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert all(not json.loads(line)["is_error"] for line in run.stdout.splitlines())

    listed = _toolgate("checkpoints", "list", "--session", "script-1", "--data-dir", str(data))
    assert listed.returncode == 0, listed.stderr
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    # Each call saw its turn's tree (no checkpoint of its own before it); the one right after it names that tree.
    assert [(r["turn"], r["kind"], r["agent_since"]) for r in rows] == [
        (1, "turn", None),
        (1, "tool", rows[0]["id"]),
        (2, "turn", None),
        (2, "tool", rows[2]["id"]),
    ]
    assert rows[1]["changed"] == ["made.txt"]

    back = _toolgate("rewind", "--session", "script-1", "--data-dir", str(data), "--to", rows[0]["id"])
    assert back.returncode == 0, back.stderr
    assert (workspace / "kept.txt").read_text() == "original\n"
    assert not (workspace / "made.txt").exists() and not (workspace / "out").exists()
    assert "conversation" in _toolgate("rewind", "--session", "script-1", "--data-dir", str(data), "--to",
                                       rows[0]["id"], "--both").stderr  # fmt: skip


def test_rewind_code_undoes_the_agents_calls_and_keeps_what_the_person_saved_between_them(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / "notes.md").write_text("the person's notes\n")
    (workspace / "config.txt").write_text("mode=slow\nlevel=1\nname=x\n")
    data = tmp_path / "data"
    session = ("--session-id", "interleaved", "--data-dir", str(data))
    run = subprocess.Popen(
        [*TOOLGATE, "run-tools", "--workspace", str(workspace), "--permission-mode", "bypassPermissions", *session],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert run.stdin is not None and run.stdout is not None
    try:

        def call(*uses: dict[str, Any]) -> None:
            assert run.stdin is not None and run.stdout is not None
            run.stdin.write(_line(*uses) + "\n")
            run.stdin.flush()
            for _ in uses:  # each call's result is written once it ran: then the person acts
                assert not json.loads(run.stdout.readline())["is_error"]

        call(use("Bash", command="sed -i 's/^mode=slow$/mode=fast/' config.txt && printf 'made\\n' > made.txt"))
        with (workspace / "notes.md").open("a") as notes:  # the person, between calls
            notes.write("added while the agent worked\n")
        with (workspace / "config.txt").open("a") as config:  # the end the agent's Bash did not touch
            config.write("person=yes\n")
        call(use("Write", file_path="second.txt", content="2\n"))
        run.stdin.close()
        assert run.wait(timeout=120) == 0
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(timeout=30)

    rows = [json.loads(line) for line in _toolgate("checkpoints", "list", "--session", "interleaved", "--data-dir",
                                                   str(data)).stdout.splitlines()]  # fmt: skip
    common = ("rewind", "--session", "interleaved", "--data-dir", str(data), "--to", rows[0]["id"])
    whole = _toolgate(*common, "--whole-tree", "--dry-run")  # the explicit option would take the person's back
    assert whole.returncode == 0 and "notes.md" in whole.stdout and "-added while the agent worked" in whole.stdout

    back = _toolgate(*common, "--code")
    assert back.returncode == 0, back.stderr
    assert (workspace / "config.txt").read_text() == "mode=slow\nlevel=1\nname=x\nperson=yes\n"
    assert (workspace / "notes.md").read_text() == "the person's notes\nadded while the agent worked\n"
    assert not (workspace / "made.txt").exists() and not (workspace / "second.txt").exists()
    assert "notes.md" not in back.stdout and "config.txt" in back.stdout


async def test_the_sidecar_lists_diffs_and_restores_and_refuses_over_unsaved_buffers(
    sidecar: SidecarClient, workspace: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("first\n")
    session_id = await sidecar.new_session(workspace, mode="bypassPermissions")
    await sidecar.run(session_id, use("Bash", command="printf 'second\\n' > notes.txt && printf n > new.txt"))
    await sidecar.run(session_id, use("Write", file_path="other.txt", content="o\n"))

    listing = await sidecar.call(p.CHECKPOINTS_LIST, {"sessionId": session_id})
    assert listing["enabled"] is True and listing["reason"] is None
    first = listing["checkpoints"][0]
    assert first["toolUseId"] is not None and first["kind"] == "tool" and "notes.txt" in first["changed"]

    ref = {"sessionId": session_id, "checkpointId": first["id"]}
    diff = await sidecar.call(p.CHECKPOINTS_DIFF, ref)
    assert {(f["path"], f["action"]) for f in diff["files"]} == {
        ("notes.txt", "write"),
        ("new.txt", "remove"),
        ("other.txt", "remove"),
    }
    assert "-second\n+first\n" in diff["diff"]
    assert diff["unsaved"] == []

    uri = target.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text="second\n")
    sidecar.text_document_did_open(types.DidOpenTextDocumentParams(item))
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(0, 0), types.Position(0, 6)), text="edited"
    )
    sidecar.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=2), [change])
    )
    assert (await sidecar.call(p.CHECKPOINTS_DIFF, ref))["unsaved"] == ["notes.txt"]  # said before a restore
    refused = await sidecar.call(p.CHECKPOINTS_RESTORE, ref)
    assert refused["restored"] is False and "notes.txt" in refused["reason"] and "unsaved" in refused["reason"]
    assert target.read_text() == "second\n"

    sidecar.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    done = await sidecar.call(p.CHECKPOINTS_RESTORE, ref)
    assert done["restored"] is True and done["redo"] is not None
    assert target.read_text() == "first\n" and not (workspace / "new.txt").exists()
    unknown = await sidecar.call(p.CHECKPOINTS_RESTORE, {**ref, "checkpointId": "999999"})
    assert unknown["restored"] is False and "no checkpoint '999999'" in unknown["reason"]


async def test_the_sidecar_rewinds_the_conversation_of_an_open_chat_and_refuses_while_a_turn_runs(
    sidecar: SidecarClient, workspace: Path
) -> None:
    steps = [{"text": "First answer."}, {"text": "Second answer."}, {"text": "Still thinking", "hang": True}]
    with MockModelServer([*steps, {"text": "Answer after the rewind."}]) as mock:
        await sidecar.call(
            p.PROVIDER_CONFIGURE, {"provider": "anthropic", "baseUrl": mock.url, "apiKey": "k", "model": "m"}
        )
        session_id = await sidecar.new_session(workspace)
        for text in ("one", "two"):
            assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": text}))[
                "stopReason"
            ] == "end_turn"
        listing = await sidecar.call(p.CHECKPOINTS_LIST, {"sessionId": session_id})
        turns = [c for c in listing["checkpoints"] if c["kind"] == "turn"]
        assert [c["turn"] for c in turns] == [1, 2] and all(c["conversation"] for c in turns)
        ref = {"sessionId": session_id, "checkpointId": turns[1]["id"], "what": "conversation"}

        sending = asyncio.ensure_future(sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "three"}))
        assert await asyncio.to_thread(mock.wait_until_hanging)
        busy = await sidecar.call(p.CHECKPOINTS_RESTORE, ref)
        assert busy["restored"] is False and "turn is running" in busy["reason"]
        await sidecar.call(p.CHAT_INTERRUPT, {"sessionId": session_id})
        assert (await sending)["stopReason"] == "interrupted"

        done = await sidecar.call(p.CHECKPOINTS_RESTORE, ref)
        assert done["restored"] is True and done["conversationRestored"] is True and done["entriesRemoved"] >= 4
        history = await sidecar.call(p.CHAT_HISTORY, {"sessionId": session_id})
        assert [m["content"][0]["text"] for m in history["messages"]] == ["one", "First answer."]

        # The open chat goes on from the cut conversation, and its transcript is appended to again.
        assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": "four"}))["stopReason"] == "end_turn"
        sent = [m["content"][0]["text"] for m in mock.requests[-1].json["messages"]]
        assert sent == ["one", "First answer.", "four"]
        undo = await sidecar.call(p.CHECKPOINTS_RESTORE, {**ref, "checkpointId": done["redo"]})
        assert undo["restored"] is True
        history = await sidecar.call(p.CHAT_HISTORY, {"sessionId": session_id})
        assert [m["content"][0]["text"] for m in history["messages"]][:4] == [
            "one",
            "First answer.",
            "two",
            "Second answer.",
        ]


async def test_the_sidecar_tells_which_checkpoint_starts_each_prompt_and_what_each_turn_changed(
    sidecar: SidecarClient, workspace: Path
) -> None:
    (workspace / "kept.txt").write_text("kept\n")
    bash = {"name": "Bash", "input": {"command": "printf 'by bash\\n' > made.txt && rm kept.txt"}}
    steps = [{"text": "Nothing to do."}, {"text": "Running.", "tool_uses": [bash]}, {"text": "Done."}]
    with MockModelServer(steps) as mock:
        await sidecar.call(
            p.PROVIDER_CONFIGURE, {"provider": "anthropic", "baseUrl": mock.url, "apiKey": "k", "model": "m"}
        )
        session_id = await sidecar.new_session(workspace, mode="bypassPermissions")
        for text in ("look", "make a file"):
            assert (await sidecar.call(p.CHAT_SEND, {"sessionId": session_id, "text": text}))[
                "stopReason"
            ] == "end_turn"
        (workspace / "after.txt").write_text("the person's own edit, after the turn\n")

        listing = await sidecar.call(p.CHECKPOINTS_LIST, {"sessionId": session_id})
        first, second = listing["turns"]
        assert (first["prompt"], first["changed"], first["start"] == first["end"]) == (0, [], True)
        assert (second["prompt"], second["changed"]) == (1, ["kept.txt", "made.txt"])  # Bash's changes, not after.txt

        ref = {"sessionId": session_id, "checkpointId": second["start"]}
        diff = await sidecar.call(p.CHECKPOINTS_DIFF, {**ref, "to": second["end"]})
        assert {(f["path"], f["action"]) for f in diff["files"]} == {("kept.txt", "remove"), ("made.txt", "write")}
        assert "+by bash\n" in diff["diff"]
        before = await sidecar.call(p.CHECKPOINTS_FILE, {**ref, "path": "kept.txt"})
        assert before == {"exists": True, "content": "kept\n", "binary": False}
        assert (await sidecar.call(p.CHECKPOINTS_FILE, {**ref, "path": "made.txt"}))["exists"] is False
        after = await sidecar.call(p.CHECKPOINTS_FILE, {**ref, "checkpointId": second["end"], "path": "made.txt"})
        assert after["content"] == "by bash\n"

        cut = await sidecar.call(p.CHECKPOINTS_RESTORE, {**ref, "what": "conversation"})
        assert cut["restored"] is True
        turns = (await sidecar.call(p.CHECKPOINTS_LIST, {"sessionId": session_id}))["turns"]
        assert [t["prompt"] for t in turns] == [0, None]  # the second prompt is no longer in the conversation
