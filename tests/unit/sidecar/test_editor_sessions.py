"""Live sessions over the shared session store: create, list, load, delete, and what a broken directory does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.session_files import META_FILE, SessionError, SessionFiles, SessionMeta
from toolgate.sidecar.editor_sessions import SessionManager
from toolgate.sidecar.protocol import SessionNewParams


def build(meta: SessionMeta, directory: Path) -> Runtime:
    options = RuntimeOptions(mode=meta.mode, session_id=meta.id, data_dir=directory, review_edits=meta.review_edits)
    return build_runtime(Path(meta.workspace), NonInteractiveApprover(), options)


def manager(root: Path) -> SessionManager:
    return SessionManager(SessionFiles(root), build)


async def test_create_list_load_and_delete(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "data"
    sessions = manager(root)
    params = SessionNewParams(mode=PermissionMode.PLAN, title="t", review_edits="always")
    live = sessions.create(params, default_workspace=workspace)
    directory = sessions.store.session_dir(live.id)
    assert (directory / META_FILE).is_file()
    assert live.runtime.session.mode is PermissionMode.PLAN and live.runtime.session.id == live.id

    store = live.runtime.session.deps.get(OUTPUT_STORE)
    assert store.put("big output", source="test").path.parent == directory / "outputs"

    [listed] = sessions.list()
    assert listed.session_id == live.id and listed.live

    other = manager(root)  # another process, same root
    [cold] = other.list()
    assert (cold.session_id, cold.live, cold.title, cold.review_edits) == (live.id, False, "t", "always")
    reopened = other.load(live.id)
    assert reopened.meta.mode is PermissionMode.PLAN and reopened.runtime.session.review_edits == "always"
    assert reopened.mode is PermissionMode.PLAN and reopened.runtime.session.mode is PermissionMode.PLAN

    await sessions.delete(live.id)
    assert not directory.exists()
    with pytest.raises(SessionError, match="There is no session"):
        sessions.get(live.id)
    await other.close_all()


async def test_saving_keeps_what_another_writer_put_in_meta_json(tmp_path: Path, workspace: Path) -> None:
    sessions = manager(tmp_path / "data")
    live = sessions.create(SessionNewParams(), default_workspace=workspace)
    meta_file = sessions.store.session_dir(live.id) / META_FILE
    on_disk = json.loads(meta_file.read_text())
    # The agent loop names the session after its first message, and a newer version adds a key.
    meta_file.write_text(json.dumps({**on_disk, "title": "Fix the parser", "pinned": True}))
    live.set_mode(PermissionMode.ACCEPT_EDITS)
    saved = json.loads(meta_file.read_text())
    assert (saved["title"], saved["pinned"], saved["mode"]) == ("Fix the parser", True, "acceptEdits")
    assert live.info().title == "Fix the parser" and live.runtime.session.mode is PermissionMode.ACCEPT_EDITS
    await live.aclose()


async def test_the_mode_has_one_setter_and_every_answer_reports_the_live_mode(tmp_path: Path, workspace: Path) -> None:
    sessions = manager(tmp_path / "data")
    live = sessions.create(SessionNewParams(mode=PermissionMode.PLAN), default_workspace=workspace)
    assert (live.mode, live.info().mode, live.settings().mode) == (PermissionMode.PLAN,) * 3
    live.set_mode(PermissionMode.ACCEPT_EDITS)
    assert live.runtime.session.mode is PermissionMode.ACCEPT_EDITS  # what the next decision uses
    assert (live.info().mode, live.settings().mode) == (PermissionMode.ACCEPT_EDITS,) * 2
    [listed] = sessions.list()
    assert listed.mode is PermissionMode.ACCEPT_EDITS
    assert sessions.store.load(live.id).mode is PermissionMode.ACCEPT_EDITS  # recorded, so it reopens in it
    await live.aclose()


def test_broken_or_foreign_directories_are_skipped_not_deleted(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "data"
    live = manager(root).create(SessionNewParams(), default_workspace=workspace)
    broken = root / "sessions" / "broken"
    broken.mkdir(parents=True)
    (broken / META_FILE).write_text("{not json")
    (root / "sessions" / "stray").mkdir()
    assert [s.session_id for s in manager(root).list()] == [live.id]
    assert (broken / META_FILE).read_text() == "{not json"
    with pytest.raises(SessionError, match="unreadable"):
        manager(root).load("broken")


def test_a_session_whose_workspace_is_gone_cannot_be_loaded(tmp_path: Path) -> None:
    root = tmp_path / "data"
    workspace = tmp_path / "gone"
    workspace.mkdir()
    session_id = manager(root).create(SessionNewParams(), default_workspace=workspace).id
    workspace.rmdir()
    with pytest.raises(SessionError, match="not a directory"):
        manager(root).load(session_id)


def test_no_workspace_at_all_is_explained(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="needs `workspace`"):
        manager(tmp_path).create(SessionNewParams(), default_workspace=None)


async def test_the_session_list_shows_the_name_the_first_message_gave_right_after_it(
    tmp_path: Path, workspace: Path
) -> None:
    sessions = manager(tmp_path / "data")
    live = sessions.create(SessionNewParams(), default_workspace=workspace)

    class NamingChat:
        """What the stored chat does after a message: it names the session on disk (stored_chat.after_send)."""

        busy = False

        async def send(self, text: str, attached: object = ()) -> str:
            sessions.store.touch(live.id, title=text)
            return "end_turn"

    await live.chat_send(NamingChat(), "Fix the greeting")  # type: ignore[arg-type]
    [listed] = sessions.list()
    assert listed.title == "Fix the greeting"
    await live.aclose()


class RecordingChat:
    busy = False

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, text: str, attached: object = ()) -> str:
        self.sent.append(text)
        return "end_turn"


async def test_what_the_session_is_told_comes_with_the_next_message_only(tmp_path: Path, workspace: Path) -> None:
    live = manager(tmp_path / "data").create(SessionNewParams(), default_workspace=workspace)
    chat = RecordingChat()
    live.tell("The folder /a was added to the editor's workspace")
    live.tell("The folder /b was removed from the editor's workspace")
    await live.chat_send(chat, "hello")  # type: ignore[arg-type]
    await live.chat_send(chat, "again")  # type: ignore[arg-type]
    assert chat.sent == [
        "[The folder /a was added to the editor's workspace]\n\n"
        "[The folder /b was removed from the editor's workspace]\n\nhello",
        "again",
    ]
    await live.aclose()
