"""The checkpoint store over real git: what it captures, what a restore puts back, and what it never touches."""

from __future__ import annotations

import dataclasses
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from toolgate.checkpoints.capture import Captured
from toolgate.checkpoints.models import Checkpoint, CheckpointError
from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.settings import CheckpointSettings
from toolgate.checkpoints.store import CheckpointStore

from .trees import directories, git, snapshot


def _store(tmp_path: Path, workspace: Path, **settings: object) -> CheckpointStore:
    return CheckpointStore(tmp_path / "data", workspace, CheckpointSettings.model_validate(settings))


def test_restore_puts_back_bytes_modes_links_and_removes_what_was_created(tmp_path: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_bytes(b"one\r\n")
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o755)
    (workspace / "dir").mkdir()
    (workspace / "dir" / "kept").write_text("k")
    (workspace / "to-a").symlink_to("a.txt")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    before, dirs_before = snapshot(workspace), directories(workspace)

    (workspace / "a.txt").write_bytes(b"two")
    (workspace / "run.sh").chmod(0o644)
    (workspace / "dir" / "kept").unlink()
    (workspace / "new" / "deep").mkdir(parents=True)
    (workspace / "new" / "deep" / "x").write_text("x")
    (workspace / "to-a").unlink()
    (workspace / "to-a").symlink_to("/etc")
    second = store.create("s1", turn=1, tool_use_id="tu1")
    assert sorted(second.changed) == ["a.txt", "dir/kept", "new/deep/x", "run.sh", "to-a"]
    after = snapshot(workspace)

    report = restore(store, "s1", first.id, turn=2)
    assert snapshot(workspace) == before
    assert directories(workspace) == dirs_before  # new/ and new/deep/ went with the file they held
    assert report.redo is not None
    restore(store, "s1", report.redo, turn=2)  # redo
    assert snapshot(workspace) == after


def test_an_unchanged_tree_makes_no_new_tool_checkpoint(tmp_path: Path, workspace: Path) -> None:
    (workspace / "f").write_text("f")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    assert store.create("s1", turn=1, tool_use_id="t1").id == first.id
    assert store.create("s1", turn=2, kind="turn").id != first.id  # each turn start is its own checkpoint


def test_ignored_files_are_neither_captured_nor_touched(tmp_path: Path, workspace: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / ".git" / "info" / "exclude").write_text("secret/\n")
    for name in ("app.log", "secret/key", "node_modules/pkg/index.js", "src/main.py"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(name)
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    assert sorted(first.changed) == [".gitignore", "src/main.py"]
    (workspace / "app.log").write_text("later")
    restore(store, "s1", first.id, turn=2)
    assert (workspace / "app.log").read_text() == "later"
    assert (workspace / "node_modules" / "pkg" / "index.js").is_file()


def test_nested_repositories_are_captured_as_files(tmp_path: Path, workspace: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / "vendor" / "lib").mkdir(parents=True)
    git(workspace / "vendor" / "lib", "init", "-q")
    (workspace / "vendor" / "lib" / "code.c").write_text("int x;\n")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    assert first.changed == ["vendor/lib/code.c"]
    (workspace / "vendor" / "lib" / "code.c").write_text("broken")
    (workspace / "vendor" / "lib" / "more.c").write_text("new")
    assert sorted(store.create("s1", turn=1).changed) == ["vendor/lib/code.c", "vendor/lib/more.c"]
    restore(store, "s1", first.id, turn=2)
    assert (workspace / "vendor" / "lib" / "code.c").read_text() == "int x;\n"
    assert not (workspace / "vendor" / "lib" / "more.c").exists()
    assert (workspace / "vendor" / "lib" / ".git" / "HEAD").is_file()


def test_odd_names_round_trip(tmp_path: Path, workspace: Path) -> None:
    base = os.fsencode(workspace)
    names = [b"line\nbreak.txt", b"latin1-\xe9.txt", b"sp ace", b'quote"s']
    for name in names:
        with open(os.path.join(base, name), "wb") as handle:
            handle.write(name)
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    before = snapshot(workspace)
    for name in names:
        os.unlink(os.path.join(base, name))
    restore(store, "s1", first.id, turn=2)
    assert snapshot(workspace) == before


def test_large_files_and_fifos_are_skipped_recorded_and_never_deleted(tmp_path: Path, workspace: Path) -> None:
    (workspace / "small").write_text("s")
    store = _store(tmp_path, workspace, max_file_bytes=10)
    (workspace / "big").write_bytes(b"x" * 11)
    os.mkfifo(workspace / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(workspace / "sock"))
    first = store.create("s1", turn=1, kind="turn")
    listener.close()
    assert sorted((s.path, s.reason, s.size) for s in first.skipped) == [
        ("big", "too_large", 11),
        ("pipe", "not_a_file", None),
        ("sock", "not_a_file", None),
    ]
    (workspace / "big").write_bytes(b"y" * 20)
    (workspace / "small").write_text("changed")
    restore(store, "s1", first.id, turn=2)
    assert (workspace / "big").read_bytes() == b"y" * 20  # not captured, so not ours to delete or restore
    assert (workspace / "small").read_text() == "s"


def test_a_file_that_grew_past_the_cap_is_restored_to_its_captured_bytes(tmp_path: Path, workspace: Path) -> None:
    (workspace / "grows").write_text("tiny")
    store = _store(tmp_path, workspace, max_file_bytes=10)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "grows").write_bytes(b"z" * 100)
    second = store.create("s1", turn=1)
    assert [s.reason for s in second.skipped] == ["too_large"]
    restore(store, "s1", first.id, turn=2)
    assert (workspace / "grows").read_text() == "tiny"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_is_skipped_and_recorded(tmp_path: Path, workspace: Path) -> None:
    (workspace / "locked").write_text("x")
    (workspace / "locked").chmod(0)
    store = _store(tmp_path, workspace)
    assert [(s.path, s.reason) for s in store.create("s1", turn=1, kind="turn").skipped] == [("locked", "unreadable")]


def test_a_link_swapped_in_for_a_directory_is_replaced_not_followed(tmp_path: Path, workspace: Path) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "mod.py").write_text("original")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("not yours")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "pkg" / "mod.py").unlink()
    (workspace / "pkg").rmdir()
    (workspace / "pkg").symlink_to(outside)
    restore(store, "s1", first.id, turn=2)
    assert (outside / "mod.py").read_text() == "not yours"
    assert not (workspace / "pkg").is_symlink()
    assert (workspace / "pkg" / "mod.py").read_text() == "original"


def test_a_link_swapped_in_for_a_file_is_replaced_not_written_through(tmp_path: Path, workspace: Path) -> None:
    (workspace / "conf").write_text("original")
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "conf").unlink()
    (workspace / "conf").symlink_to(victim)
    restore(store, "s1", first.id, turn=2)
    assert victim.read_text() == "keep me"
    assert not (workspace / "conf").is_symlink() and (workspace / "conf").read_text() == "original"


def test_unsaved_editor_changes_stop_the_restore_before_anything_changes(tmp_path: Path, workspace: Path) -> None:
    (workspace / "open.py").write_text("v1")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "open.py").write_text("v2")
    with pytest.raises(CheckpointError, match=r"unsaved changes in the editor.*open\.py"):
        restore(store, "s1", first.id, turn=2, is_dirty=lambda p: p.name == "open.py")
    assert (workspace / "open.py").read_text() == "v2"
    assert [c.id for c in store.checkpoints("s1")] == [first.id]  # not even a redo point was made


def test_a_dry_run_lists_and_diffs_without_changing_anything(tmp_path: Path, workspace: Path) -> None:
    (workspace / "f.txt").write_text("old\n")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "f.txt").write_text("new\n")
    (workspace / "g.txt").write_text("g\n")
    report = restore(store, "s1", first.id, turn=2, dry_run=True)
    assert [(c.path, c.action) for c in report.changes] == [("f.txt", "write"), ("g.txt", "remove")]
    assert "-new\n+old\n" in report.diff and "deleted file mode" in report.diff
    assert (workspace / "f.txt").read_text() == "new\n" and (workspace / "g.txt").exists()


def test_an_interrupted_restore_is_finished_by_running_it_again(tmp_path: Path, workspace: Path) -> None:
    for i in range(5):
        (workspace / f"f{i}").write_text(f"v1-{i}")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    before = snapshot(workspace)
    for i in range(5):
        (workspace / f"f{i}").write_text(f"v2-{i}")
    (workspace / "created").write_text("c")
    seen: list[str] = []

    def die_on_third(change: object) -> None:
        seen.append(str(change))
        if len(seen) == 3:
            raise OSError(28, "No space left on device")

    with pytest.raises(CheckpointError, match=r"stopped part-way.*run the same restore again"):
        restore(store, "s1", first.id, turn=2, before_apply=die_on_third)
    assert snapshot(workspace) != before
    restore(store, "s1", first.id, turn=2)
    assert snapshot(workspace) == before


def test_a_restore_syncs_each_file_and_each_directory_once(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for directory in ("one", "two"):
        (workspace / directory).mkdir()
        for i in range(4):
            (workspace / directory / f"f{i}").write_text(f"v1 {i}")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    before = snapshot(workspace)
    for directory in ("one", "two"):
        for i in range(4):
            (workspace / directory / f"f{i}").write_text(f"v2 {i}")
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append("directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    restore(store, "s1", first.id, turn=2)
    assert snapshot(workspace) == before
    assert sorted(synced) == ["directory"] * 2 + ["file"] * 8  # not one directory fsync per file


def test_a_file_the_person_changes_as_the_restore_starts_is_not_overwritten(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        (workspace / name).write_text(f"{name} v1")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    for name in ("a", "b"):
        (workspace / name).write_text(f"{name} v2")
    real_record = store.record

    def person_saves_then_record(*args: Any, **kwargs: Any) -> Checkpoint:
        (workspace / "b").write_text("b typed by the person")  # after the files were read, before the writes
        return real_record(*args, **kwargs)

    monkeypatch.setattr(store, "record", person_saves_then_record)
    with pytest.raises(CheckpointError, match=r"changed while the restore was starting.*: b; nothing was restored"):
        restore(store, "s1", first.id, turn=2)
    assert (workspace / "b").read_text() == "b typed by the person"
    assert (workspace / "a").read_text() == "a v2"  # refused before any file was written


def test_a_restore_reads_the_tree_once_and_its_redo_holds_exactly_that_tree(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "f").write_text("v1")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "f").write_text("v2")
    (workspace / "g").write_text("created")
    before = snapshot(workspace)
    captures: list[Path | None] = []
    real_capture = store.capture

    def counting_capture(session: str, root: Path | None = None) -> Captured:
        captures.append(root)
        return real_capture(session, root)

    monkeypatch.setattr(store, "capture", counting_capture)
    report = restore(store, "s1", first.id, turn=2)
    assert captures == [None]  # the plan and the redo checkpoint share one capture
    assert report.redo is not None
    monkeypatch.undo()
    restore(store, "s1", report.redo, turn=2)
    assert snapshot(workspace) == before


def test_an_additional_root_replaced_by_a_link_is_left_alone(tmp_path: Path, workspace: Path) -> None:
    extra, elsewhere = tmp_path / "extra", tmp_path / "elsewhere"
    for directory in (extra, elsewhere):
        directory.mkdir()
        (directory / "lib.py").write_text(f"{directory.name} v1")
    (workspace / "f").write_text("v1")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn", roots=[extra])
    (workspace / "f").write_text("v2")
    (elsewhere / "lib.py").write_text("elsewhere v2")
    extra.rename(tmp_path / "moved")
    extra.symlink_to(elsewhere)
    restore(store, "s1", first.id, turn=2)
    assert (workspace / "f").read_text() == "v1"
    assert (elsewhere / "lib.py").read_text() == "elsewhere v2"  # not the captured root: never written through


def test_an_unknown_checkpoint_is_a_clear_error(tmp_path: Path, workspace: Path) -> None:
    store = _store(tmp_path, workspace)
    store.create("s1", turn=1, kind="turn")
    with pytest.raises(CheckpointError, match=r"no checkpoint '999999' in session 's1'.*checkpoints list"):
        restore(store, "s1", "999999", turn=2)


def test_an_unwritable_store_says_so(tmp_path: Path, workspace: Path) -> None:
    (tmp_path / "data").write_text("a file where the data dir should be")
    with pytest.raises(CheckpointError, match="cannot be written"):
        CheckpointStore(tmp_path / "data", workspace)


def test_no_git_turns_checkpoints_off_with_a_reason(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(CheckpointError, match="git is not installed"):
        CheckpointStore(tmp_path / "data", workspace)


def test_sessions_share_objects_keep_their_own_checkpoints_and_retention(tmp_path: Path, workspace: Path) -> None:
    store = _store(tmp_path, workspace, keep_per_session=3)
    for i in range(5):
        (workspace / "f").write_text(str(i))
        store.create("one", turn=i, kind="turn")
    other = store.create("two", turn=1, kind="turn")
    assert [c.id for c in store.checkpoints("one")] == ["000003", "000004", "000005"]
    assert [c.id for c in store.checkpoints("two")] == [other.id]
    assert CheckpointStore.for_session(tmp_path / "data", "two").checkpoints("two")[0].id == other.id
    store.delete_session("one")
    assert store.checkpoints("one") == []
    result = store.gc()
    assert result["dropped"] == 0 and result["bytes"] > 0


def test_gc_drops_the_oldest_checkpoints_to_meet_the_size_cap(tmp_path: Path, workspace: Path) -> None:
    store = _store(tmp_path, workspace, max_store_bytes=1)
    for i in range(3):
        (workspace / "f").write_bytes(os.urandom(2000) + bytes([i]))
        store.create("s", turn=i, kind="turn")
    assert store.gc()["dropped"] == 3
    assert store.checkpoints("s") == []


def test_the_time_cap_is_announced(tmp_path: Path, workspace: Path) -> None:
    (workspace / "f").write_text("f")
    store = _store(tmp_path, workspace)
    store.git = dataclasses.replace(store.git, timeout=0.000001)
    with pytest.raises(CheckpointError, match=r"longer than .* s \(the checkpoint time cap\)"):
        store.create("s1", turn=1, kind="turn")


def test_two_sessions_checkpoint_at_once_without_losing_any(tmp_path: Path, workspace: Path) -> None:
    for i in range(20):
        (workspace / f"f{i}").write_text(str(i))
    stores = [_store(tmp_path, workspace), _store(tmp_path, workspace)]  # as two processes would open it
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            for turn in range(5):
                stores[index].create(f"s{index}", turn=turn, kind="turn")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for index in range(2):
        assert [c.id for c in stores[0].checkpoints(f"s{index}")] == [f"{n:06d}" for n in range(1, 6)]


def test_a_gc_after_a_dry_run_does_not_break_the_next_checkpoint(tmp_path: Path, workspace: Path) -> None:
    (workspace / "f").write_text("one")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "f").write_text("captured by the dry run only")
    restore(store, "s1", first.id, turn=1, dry_run=True)  # its blob is in the index, in no commit
    assert list(store.git.git_dir.glob("sharedindex.*"))  # the index is a split one
    store.gc()
    assert not list(store.git.git_dir.glob("sharedindex.*"))  # its shared part went with it
    second = store.create("s1", turn=2, kind="turn")
    assert second.changed == ["f"]
    restore(store, "s1", first.id, turn=2)
    restore(store, "s1", second.id, turn=2)
    assert (workspace / "f").read_text() == "captured by the dry run only"


def test_the_workspace_gitattributes_do_not_change_the_bytes_kept(tmp_path: Path, workspace: Path) -> None:
    # text=auto would store CRLF as LF, and a restore would then write LF: byte-exact means no conversion.
    (workspace / ".gitattributes").write_text("* text=auto eol=crlf\n*.dat ident\n")
    (workspace / "mixed.txt").write_bytes(b"one\r\ntwo\n")
    (workspace / "id.dat").write_bytes(b"$Id$\n")
    store = _store(tmp_path, workspace)
    first = store.create("s1", turn=1, kind="turn")
    before = snapshot(workspace)
    (workspace / "mixed.txt").write_bytes(b"changed\n")
    (workspace / "id.dat").write_bytes(b"changed\n")
    restore(store, "s1", first.id, turn=1)
    assert snapshot(workspace) == before


def test_changed_names_what_a_checkpoint_changed_with_or_without_comparing_trees(
    tmp_path: Path, workspace: Path
) -> None:
    for name in ("a", "b", "c"):
        (workspace / name).write_text(name)
    store = _store(tmp_path, workspace)
    store.create("s1", turn=1, kind="turn")
    (workspace / "a").write_text("a changed")
    (workspace / "b").unlink()
    (workspace / "d").write_text("new")
    (workspace / "c").write_text("c")  # rewritten with the same bytes: not a change
    assert store.create("s1", turn=1, tool_use_id="t1").changed == ["a", "b", "d"]
    (workspace / "e").write_text("only a new file")
    assert store.create("s1", turn=1, tool_use_id="t2").changed == ["e"]
    os.utime(workspace / "e", (1, 1))  # the stat data changed, the bytes did not
    assert store.create("s1", turn=1, kind="turn").changed == []
