"""Sessions under the data root: create, list, load, delete, and what a broken directory does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolgate.cli.run_tools import NonInteractiveApprover
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime, build_runtime
from toolgate.sidecar.protocol import SessionNewParams
from toolgate.sidecar.sessions import (
    META_FILE,
    SessionError,
    SessionManager,
    SessionMeta,
    default_data_root,
    session_dir,
)


def build(meta: SessionMeta, directory: Path) -> Runtime:
    return build_runtime(
        Path(meta.workspace), NonInteractiveApprover(), mode=meta.mode, session_id=meta.id, data_dir=directory
    )


def test_default_data_root_follows_xdg(tmp_path: Path) -> None:
    assert default_data_root({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "toolgate"
    assert default_data_root({}) == Path.home() / ".local" / "share" / "toolgate"
    assert default_data_root({"XDG_DATA_HOME": "relative"}) == Path.home() / ".local" / "share" / "toolgate"


async def test_saving_keeps_what_another_writer_put_in_meta_json(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "data"
    live = SessionManager(root, build).create(SessionNewParams(), default_workspace=workspace)
    meta_file = session_dir(root, live.id) / META_FILE
    on_disk = json.loads(meta_file.read_text())
    assert set(on_disk) == {"id", "workspace", "mode", "title", "created", "updated", "review_edits"}
    # The agent loop names the session after its first message, and a newer version adds a key.
    meta_file.write_text(json.dumps({**on_disk, "title": "Fix the parser", "pinned": True}))
    live.set_mode(PermissionMode.ACCEPT_EDITS)
    saved = json.loads(meta_file.read_text())
    assert (saved["title"], saved["pinned"], saved["mode"]) == ("Fix the parser", True, "acceptEdits")
    assert live.info().title == "Fix the parser"
    await live.aclose()


async def test_create_list_load_and_delete(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "data"
    manager = SessionManager(root, build)
    live = manager.create(SessionNewParams(mode=PermissionMode.PLAN, title="t"), default_workspace=workspace)
    assert (session_dir(root, live.id) / META_FILE).is_file()
    assert live.runtime.session.mode is PermissionMode.PLAN and live.runtime.session.id == live.id

    store = live.runtime.session.deps.get(OUTPUT_STORE)
    stored = store.put("big output", source="test")
    assert stored.path.parent == session_dir(root, live.id) / "outputs"

    [listed] = manager.list()
    assert listed.session_id == live.id and listed.live

    other = SessionManager(root, build)  # another process, same root
    [cold] = other.list()
    assert (cold.session_id, cold.live, cold.title) == (live.id, False, "t")
    assert other.load(live.id).meta.mode is PermissionMode.PLAN

    await manager.delete(live.id)
    assert not session_dir(root, live.id).exists()
    with pytest.raises(SessionError, match="There is no session"):
        manager.get(live.id)
    await other.close_all()


def test_broken_or_foreign_directories_are_skipped_not_deleted(tmp_path: Path, workspace: Path) -> None:
    root = tmp_path / "data"
    manager = SessionManager(root, build)
    live = manager.create(SessionNewParams(), default_workspace=workspace)
    broken = session_dir(root, "broken")
    broken.mkdir(parents=True)
    (broken / META_FILE).write_text("{not json")
    (root / "sessions" / "stray").mkdir()
    assert [s.session_id for s in SessionManager(root, build).list()] == [live.id]
    assert (broken / META_FILE).read_text() == "{not json"
    with pytest.raises(SessionError, match="unreadable"):
        SessionManager(root, build).load("broken")


def test_a_session_whose_workspace_is_gone_cannot_be_loaded(tmp_path: Path) -> None:
    root = tmp_path / "data"
    workspace = tmp_path / "gone"
    workspace.mkdir()
    session_id = SessionManager(root, build).create(SessionNewParams(), default_workspace=workspace).id
    workspace.rmdir()
    with pytest.raises(SessionError, match="not a directory"):
        SessionManager(root, build).load(session_id)


def test_no_workspace_at_all_is_explained(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="needs `workspace`"):
        SessionManager(tmp_path, build).create(SessionNewParams(), default_workspace=None)
