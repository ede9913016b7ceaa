"""Approvals and diff reviews answered by the test client over real JSON-RPC; dirty editor buffers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from tests.integration.sidecar_client import SidecarClient, use

from toolgate.sidecar import protocol as p
from toolgate.sidecar import protocol_changes as c


def answer(reply: dict[str, Any]) -> Any:
    async def respond(params: dict[str, Any]) -> dict[str, Any]:
        return reply

    return respond


def always_allow(sidecar: SidecarClient, rule: str, scope: str, covered: list[bool | None]) -> Any:
    """What the editor does for "Always allow": save the rule (naming the waiting call), then allow plainly."""

    async def respond(params: dict[str, Any]) -> dict[str, Any]:
        call = {"tool": params["toolName"], "input": params["input"]}
        added = await sidecar.call(
            p.SETTINGS_ADD_RULE, {"sessionId": params["sessionId"], "rule": rule, "scope": scope, "call": call}
        )
        covered.append(added["coversCall"])
        return {"decision": "allow"}

    return respond


async def test_approval_allowed(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_approval = answer({"decision": "allow"})
    call = use("Gate", label="one")
    [result] = await sidecar.run(session_id, call)
    assert result == {"type": "tool_result", "tool_use_id": call["id"], "content": "gate one passed", "is_error": False}
    [asked] = sidecar.approvals
    assert asked["sessionId"] == session_id and asked["toolUseId"] == call["id"] and asked["toolName"] == "Gate"
    assert asked["input"] == {"label": "one"}
    assert asked["summary"] and asked["reason"]
    assert asked["suggestions"] == [{"rule": "Gate", "scope": "local"}]  # the engine suggests the local file


async def test_approval_denied_with_feedback(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_approval = answer({"decision": "deny", "feedback": "use the staging gate"})
    [result] = await sidecar.run(session_id, use("Gate", label="one"))
    assert result["is_error"] is True
    assert 'kind="permission"' in result["content"] and "use the staging gate" in result["content"]
    assert "passed" not in result["content"]


async def test_remembered_approval_is_not_asked_again(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    covered: list[bool | None] = []
    sidecar.answer_approval = always_allow(sidecar, "Gate", "session", covered)
    first, second = await sidecar.run(session_id, use("Gate", label="a"), use("Gate", label="b"))
    assert (first["content"], second["content"]) == ("gate a passed", "gate b passed")
    assert len(sidecar.approvals) == 1 and covered == [True]
    # Another session does not inherit a session-scoped rule.
    other = await sidecar.new_session(workspace)
    await sidecar.run(other, use("Gate", label="c"))
    assert len(sidecar.approvals) == 2


async def test_an_unusable_answer_is_a_denial(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_approval = answer({"decision": "sure"})
    [off_protocol] = await sidecar.run(session_id, use("Gate", label="a"))

    async def fail(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("the approval UI crashed")

    sidecar.answer_approval = fail
    [errored] = await sidecar.run(session_id, use("Gate", label="b"))
    for result in (off_protocol, errored):
        assert result["is_error"] and "no answer came from the editor" in result["content"], result
    await sidecar.wait_for_log("does not fit the protocol")


async def test_diff_review_is_the_approval_and_accepting_writes(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_review = answer({"decision": "accept"})
    target = workspace / "new.txt"
    [result] = await sidecar.run(session_id, use("Write", file_path="new.txt", content="hello\n"))
    assert result["is_error"] is False and "Created new.txt" in result["content"]
    assert target.read_text() == "hello\n"
    assert sidecar.approvals == []  # one prompt, not two
    [review] = sidecar.reviews
    assert review["sessionId"] == session_id and review["toolName"] == "Write" and review["title"]
    assert review["files"] == [{"path": str(target), "original": None, "proposed": "hello\n"}]
    assert review["suggestions"]


async def test_diff_review_rejected(sidecar: SidecarClient, workspace: Path) -> None:
    target = workspace / "keep.txt"
    target.write_text("original\n")
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_review = answer({"decision": "reject", "feedback": "keep the original wording"})
    await sidecar.run(session_id, use("Read", file_path="keep.txt"))
    [result] = await sidecar.run(session_id, use("Edit", file_path="keep.txt", old_string="original", new_string="x"))
    assert result["is_error"] is True and "keep the original wording" in result["content"]
    assert target.read_text() == "original\n"
    assert sidecar.reviews[0]["files"][0]["original"] == "original\n"
    assert sidecar.reviews[0]["files"][0]["proposed"] == "x\n"


async def test_diff_review_accepted_with_the_users_edits(sidecar: SidecarClient, workspace: Path) -> None:
    target = workspace / "notes.txt"
    session_id = await sidecar.new_session(workspace)

    async def edit(params: dict[str, Any]) -> dict[str, Any]:
        [proposal] = params["files"]
        return {"decision": "accept", "files": [{"path": proposal["path"], "content": "line one\nline 2 (mine)\n"}]}

    sidecar.answer_review = edit
    [result] = await sidecar.run(session_id, use("Write", file_path="notes.txt", content="line one\nline two\n"))
    assert target.read_text() == "line one\nline 2 (mine)\n"
    assert result["is_error"] is False
    assert "-line two" in result["content"] and "+line 2 (mine)" in result["content"]


async def test_a_review_answer_that_would_delete_an_edited_file_is_refused(
    sidecar: SidecarClient, workspace: Path
) -> None:
    target = workspace / "keep.txt"
    target.write_text("precious\n")
    session_id = await sidecar.new_session(workspace)

    async def erase(params: dict[str, Any]) -> dict[str, Any]:
        return {"decision": "accept", "files": [{"path": params["files"][0]["path"], "content": None}]}

    sidecar.answer_review = erase
    await sidecar.run(session_id, use("Read", file_path="keep.txt"))
    [result] = await sidecar.run(session_id, use("Write", file_path="keep.txt", content="edited\n"))
    assert result["is_error"] is True and "no answer came from the editor" in result["content"]
    assert target.read_text() == "precious\n"
    await sidecar.wait_for_log("would delete files that were to be edited")


async def test_a_new_file_of_a_multi_file_review_can_be_skipped(sidecar: SidecarClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    session_id = await sidecar.new_session(workspace)

    async def skip_the_new_file(params: dict[str, Any]) -> dict[str, Any]:
        [new] = [f for f in params["files"] if f["original"] is None]
        return {"decision": "accept", "files": [{"path": new["path"], "content": None, "skipped": True}]}

    sidecar.answer_review = skip_the_new_file
    await sidecar.run(session_id, use("Read", file_path="a.txt"))
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Add File: new.txt\n+n\n*** End Patch"
    [result] = await sidecar.run(session_id, use("ApplyPatch", patch=patch))
    assert result["is_error"] is False, result["content"]
    assert (workspace / "a.txt").read_text() == "ALPHA\n" and not (workspace / "new.txt").exists()
    assert result["content"].splitlines() == [
        "Applied the patch (1 file):",
        "M a.txt",
        "The user chose not to create new.txt: it does not exist.",
    ]


async def test_a_deletion_of_a_multi_file_review_can_be_rejected(sidecar: SidecarClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "old.txt").write_text("keep me\n")
    (workspace / "src.txt").write_text("moved?\n")
    session_id = await sidecar.new_session(workspace)

    async def keep_what_would_be_deleted(params: dict[str, Any]) -> dict[str, Any]:
        gone = [f for f in params["files"] if f["proposed"] is None]
        return {"decision": "accept", "files": [{"path": f["path"], "content": None, "skipped": True} for f in gone]}

    sidecar.answer_review = keep_what_would_be_deleted
    await sidecar.run(session_id, *(use("Read", file_path=name) for name in ("a.txt", "old.txt", "src.txt")))
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Delete File: old.txt\n"
        "*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-moved?\n+moved!\n*** End Patch"
    )
    [result] = await sidecar.run(session_id, use("ApplyPatch", patch=patch))
    assert result["is_error"] is False, result["content"]
    assert (workspace / "a.txt").read_text() == "ALPHA\n" and (workspace / "old.txt").read_text() == "keep me\n"
    assert (workspace / "src.txt").read_text() == "moved?\n" and (workspace / "dst.txt").read_text() == "moved!\n"
    assert result["content"].splitlines() == [
        "Applied the patch (2 files):",
        "M a.txt",
        "A dst.txt (a copy of src.txt, which was kept)",
        "The user rejected the deletion of old.txt: it was kept, unchanged.",
        "The user rejected the deletion of src.txt: it was kept, unchanged.",
    ]
    # The changes bar lists what the call changed on disk: the kept files are not in it.
    listing = await sidecar.call(c.CHANGES_LIST, {"sessionId": session_id})
    assert {f["path"]: f["status"] for f in listing["files"]} == {"a.txt": "modified", "dst.txt": "created"}


async def test_review_edits_always_reviews_allowed_edits(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace, mode="bypassPermissions")
    [allowed] = await sidecar.run(session_id, use("Write", file_path="a.txt", content="a\n"))
    assert allowed["is_error"] is False and sidecar.reviews == []  # allowed, and reviewed only when asking

    await sidecar.call(p.SETTINGS_SET_REVIEW_EDITS, {"sessionId": session_id, "reviewEdits": "always"})
    sidecar.answer_review = answer({"decision": "reject"})
    [reviewed] = await sidecar.run(session_id, use("Write", file_path="b.txt", content="b\n"))
    assert len(sidecar.reviews) == 1 and reviewed["is_error"] is True
    assert not (workspace / "b.txt").exists()


async def test_a_dirty_editor_buffer_is_never_overwritten(sidecar: SidecarClient, workspace: Path) -> None:
    target = workspace / "open.txt"
    target.write_text("saved text\n")
    uri = target.as_uri()
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_review = answer({"decision": "accept"})
    await sidecar.run(session_id, use("Read", file_path="open.txt"))

    item = types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text="saved text\n")
    sidecar.text_document_did_open(types.DidOpenTextDocumentParams(item))
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(0, 0), types.Position(0, 5)), text="unsaved"
    )
    sidecar.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=2), [change])
    )
    edit = use("Edit", file_path="open.txt", old_string="text", new_string="words")
    for refused in await sidecar.run(session_id, edit, use("Write", file_path="open.txt", content="model\n")):
        assert refused["is_error"] is True and "unsaved changes in the editor" in refused["content"], refused
    assert target.read_text() == "saved text\n" and sidecar.reviews == []

    target.write_text("unsaved text\n")  # the editor saves ...
    sidecar.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    await sidecar.run(session_id, use("Read", file_path="open.txt"))  # ... so the model reads it again
    [written] = await sidecar.run(session_id, use("Edit", file_path="open.txt", old_string="text", new_string="words"))
    assert written["is_error"] is False, written
    assert target.read_text() == "unsaved words\n"


async def test_a_rule_remembered_in_the_local_file_holds_for_new_sessions(
    sidecar: SidecarClient, workspace: Path
) -> None:
    first = await sidecar.new_session(workspace)
    covered: list[bool | None] = []
    sidecar.answer_approval = always_allow(sidecar, "Gate", "local", covered)
    await sidecar.run(first, use("Gate", label="a"))
    assert covered == [True]
    saved = json.loads((workspace / ".toolgate" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == ["Gate"]
    second = await sidecar.new_session(workspace)
    [result] = await sidecar.run(second, use("Gate", label="b"))
    assert result["content"] == "gate b passed" and len(sidecar.approvals) == 1


async def test_rules_can_be_listed_added_checked_and_removed(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    settings = await sidecar.call(p.SETTINGS_GET, {"sessionId": session_id})
    assert settings["rules"] == [] and settings["problems"] == []
    assert settings["settingsFiles"]["project"] == str(workspace / ".toolgate" / "settings.json")

    # Outside the sandbox: inside it (on by default where bwrap runs), `npm test` is allowed on its account.
    check = {"sessionId": session_id, "tool": "Bash", "input": {"command": "npm test", "outside_sandbox": True}}
    assert (await sidecar.call(p.PERMISSIONS_CHECK, check))["decision"] == "ask"

    added = await sidecar.call(
        p.SETTINGS_ADD_RULE, {"sessionId": session_id, "rule": "Bash(npm test)", "scope": "project"}
    )
    assert added["changed"] is True and added["file"] == str(workspace / ".toolgate" / "settings.json")
    assert {"rule": "Bash(npm test)", "behavior": "allow", "source": "project"}.items() <= added["settings"]["rules"][
        0
    ].items()
    assert '"Bash(npm test)"' in (workspace / ".toolgate" / "settings.json").read_text()
    verdict = await sidecar.call(p.PERMISSIONS_CHECK, check)
    assert verdict["decision"] == "allow" and verdict["rule"] == "Bash(npm test)" and verdict["readOnly"] is False

    denied = await sidecar.call(
        p.SETTINGS_ADD_RULE, {"sessionId": session_id, "rule": "Bash(npm test)", "behavior": "deny"}
    )
    assert denied["changed"] is True
    assert (await sidecar.call(p.PERMISSIONS_CHECK, check))["decision"] == "deny"  # deny wins over allow

    removed = await sidecar.call(
        p.SETTINGS_REMOVE_RULE, {"sessionId": session_id, "rule": "Bash(npm test)", "behavior": "deny"}
    )
    assert removed["changed"] is True
    assert (await sidecar.call(p.PERMISSIONS_CHECK, check))["decision"] == "allow"


async def test_add_rule_says_whether_the_rule_covers_the_waiting_call(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    call = {"tool": "Bash", "input": {"command": "npm test", "outside_sandbox": True}}  # inside, allowed anyway
    narrow = {"sessionId": session_id, "rule": "Bash(npm run lint)", "call": call}
    assert (await sidecar.call(p.SETTINGS_ADD_RULE, narrow))["coversCall"] is False  # edited past the call
    plain = await sidecar.call(p.SETTINGS_ADD_RULE, {"sessionId": session_id, "rule": "Bash(make)"})
    assert plain["coversCall"] is None  # no call named: nothing to say
    fitting = {"sessionId": session_id, "rule": "Bash(npm test)", "call": call}
    assert (await sidecar.call(p.SETTINGS_ADD_RULE, fitting))["coversCall"] is True


async def test_a_check_with_an_unsaved_allow_rule_says_whether_it_would_cover_the_call_and_saves_nothing(
    sidecar: SidecarClient, workspace: Path
) -> None:
    session_id = await sidecar.new_session(workspace)
    check = {"sessionId": session_id, "tool": "Bash", "input": {"command": "npm test", "outside_sandbox": True}}
    assert (await sidecar.call(p.PERMISSIONS_CHECK, {**check, "withAllow": "Bash(npm run lint)"}))["decision"] == "ask"
    verdict = await sidecar.call(p.PERMISSIONS_CHECK, {**check, "withAllow": "Bash(npm test)"})
    assert verdict["decision"] == "allow" and verdict["rule"] == "Bash(npm test)"
    # Nothing was saved or kept: the call still asks, the session has no rule, no settings file was written.
    assert (await sidecar.call(p.PERMISSIONS_CHECK, check))["decision"] == "ask"
    assert (await sidecar.call(p.SETTINGS_GET, {"sessionId": session_id}))["rules"] == []
    assert not (workspace / ".toolgate").exists()
    # The unsaved rule is one more allow rule, no more: a deny rule in force still wins.
    deny = {"sessionId": session_id, "rule": "Bash(npm test)", "behavior": "deny"}
    await sidecar.call(p.SETTINGS_ADD_RULE, deny)
    assert (await sidecar.call(p.PERMISSIONS_CHECK, {**check, "withAllow": "Bash(npm test)"}))["decision"] == "deny"
    with pytest.raises(JsonRpcException, match="cannot be used"):
        await sidecar.call(p.PERMISSIONS_CHECK, {**check, "withAllow": "Bash(unclosed"})


async def test_an_approval_answer_with_remember_is_off_protocol(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    sidecar.answer_approval = answer({"decision": "allow", "remember": {"rule": "Gate", "scope": "session"}})
    [result] = await sidecar.run(session_id, use("Gate", label="a"))
    assert result["is_error"] and "no answer came from the editor" in result["content"], result  # one path: addRule


async def test_an_invalid_rule_is_refused_with_its_reason(sidecar: SidecarClient, workspace: Path) -> None:
    session_id = await sidecar.new_session(workspace)
    with pytest.raises(JsonRpcException, match="was not changed"):
        await sidecar.call(p.SETTINGS_ADD_RULE, {"sessionId": session_id, "rule": "Bash(unclosed"})
    assert (await sidecar.call(p.SETTINGS_GET, {"sessionId": session_id}))["rules"] == []
