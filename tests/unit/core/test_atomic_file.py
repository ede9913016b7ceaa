"""The one atomic, durable file replacement (core.atomic_file), on a real filesystem."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from toolgate.core import atomic_file
from toolgate.core.atomic_file import stage_file, write_file_atomically, write_files_atomically


@pytest.fixture
def umask_027() -> Iterator[None]:
    previous = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(previous)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_replaces_the_content_and_returns_the_new_stat(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"old\n")
    st = write_file_atomically(target, b"new content\n")
    assert target.read_bytes() == b"new content\n"
    assert st.st_size == len(b"new content\n") and st.st_ino == os.stat(target).st_ino
    assert os.listdir(tmp_path) == ["a.txt"]


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "script.sh"
    target.write_bytes(b"old\n")
    target.chmod(0o750)
    write_file_atomically(target, b"new\n")
    assert mode_of(target) == 0o750


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another user")
def test_an_existing_file_keeps_its_owner_and_group(tmp_path: Path) -> None:
    target = tmp_path / "theirs.txt"
    target.write_bytes(b"old\n")
    os.chown(target, 4321, 4322)
    write_file_atomically(target, b"new\n")
    st = os.stat(target)
    assert (st.st_uid, st.st_gid) == (4321, 4322)


def test_a_symlink_is_written_through_to_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real" / "settings.json"
    real.parent.mkdir()
    real.write_bytes(b"{}\n")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_file_atomically(link, b'{"a": 1}\n')
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b'{"a": 1}\n' and mode_of(real) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.json", "real"]
    assert os.listdir(real.parent) == ["settings.json"]  # the temp file lived beside the target, and is gone


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "missing.txt")
    write_file_atomically(link, b"made\n")
    assert link.is_symlink() and (tmp_path / "missing.txt").read_bytes() == b"made\n"


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path: Path, umask_027: None) -> None:
    target = tmp_path / "new.txt"
    write_file_atomically(target, b"hello\n")
    assert mode_of(target) == 0o640  # 0o666 minus the umask, not mkstemp's 0o600


def test_a_new_file_can_be_given_a_private_mode(tmp_path: Path) -> None:
    target = tmp_path / "meta.json"
    write_file_atomically(target, b"{}\n", new_file_mode=0o600)
    assert mode_of(target) == 0o600


def test_a_failure_while_staging_leaves_the_original_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"precious\n")

    def disk_full(handle: IO[bytes]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_file, "_flush_to_disk", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_file_atomically(target, b"x" * 100_000)
    assert target.read_bytes() == b"precious\n"
    assert os.listdir(tmp_path) == ["a.txt"]


def test_a_failure_while_replacing_leaves_the_original_and_no_temp_file(tmp_path: Path) -> None:
    # A directory in the target's place: staging succeeds, the rename over it fails (a real failure, no mock).
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside.txt").write_bytes(b"kept\n")
    with pytest.raises(OSError):
        write_file_atomically(target, b"new\n")
    assert target.is_dir() and (target / "inside.txt").read_bytes() == b"kept\n"
    assert os.listdir(tmp_path) == ["taken"]


def test_a_missing_directory_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_file_atomically(tmp_path / "no" / "such" / "dir.txt", b"x")
    assert os.listdir(tmp_path) == []


def test_staged_bytes_are_invisible_until_committed_and_discard_removes_them(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_bytes(b"old\n")
    staged = stage_file(target, b"new\n", temp_prefix=".a.txt.custom.", temp_suffix=".tg-tmp")
    assert target.read_bytes() == b"old\n"
    assert staged.temp.parent == tmp_path and staged.temp.name.startswith(".a.txt.custom.")
    assert staged.temp.name.endswith(".tg-tmp") and staged.temp.read_bytes() == b"new\n"
    staged.discard()
    assert os.listdir(tmp_path) == ["a.txt"] and target.read_bytes() == b"old\n"
    again = stage_file(target, b"new\n")
    again.commit()
    assert target.read_bytes() == b"new\n" and os.listdir(tmp_path) == ["a.txt"]


def test_the_file_and_its_directory_are_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.txt"
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append("directory" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    write_file_atomically(target, b"durable\n")
    assert synced == ["file", "directory"]  # the bytes before the rename, the rename after it


def open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_big_replaced_file_is_let_go_after_the_rename(tmp_path: Path) -> None:
    # The old file is held open across the rename (so its blocks are freed off the caller's path) and then closed:
    # no descriptor of it stays behind, and only the new bytes are reachable.
    target = tmp_path / "big.bin"
    target.write_bytes(b"o" * (2 << 20))
    atomic_file.wait_for_released_files()
    before = open_descriptors()
    write_file_atomically(target, b"n" * (2 << 20))
    atomic_file.wait_for_released_files()
    assert open_descriptors() == before
    assert target.read_bytes() == b"n" * (2 << 20) and os.listdir(tmp_path) == ["big.bin"]


def test_a_batch_fsyncs_every_file_before_any_rename_and_each_directory_once_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    targets = [tmp_path / "one" / "a", tmp_path / "one" / "b", tmp_path / "two" / "c", tmp_path / "two" / "d"]
    targets[0].write_bytes(b"old\n")
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def recording_fsync(fd: int) -> None:
        info = os.fstat(fd)
        events.append(f"directory {info.st_ino}" if stat.S_ISDIR(info.st_mode) else "file")
        real_fsync(fd)

    def recording_replace(source: str | Path, target: str | Path) -> None:
        events.append("rename")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    stats = write_files_atomically([(path, path.name.encode() * 3) for path in targets])
    assert [path.read_bytes() for path in targets] == [b"aaa", b"bbb", b"ccc", b"ddd"]
    assert [s.st_ino for s in stats] == [os.stat(path).st_ino for path in targets]
    assert events[:8] == ["file"] * 4 + ["rename"] * 4
    inodes = {f"directory {os.stat(tmp_path / name).st_ino}" for name in ("one", "two")}
    assert sorted(events[8:]) == sorted(inodes)  # one fsync for each directory, after all the renames
    assert sorted(os.listdir(tmp_path / "one")) == ["a", "b"]


def test_a_batch_that_fails_while_staging_replaces_nothing_and_leaves_no_temp_file(tmp_path: Path) -> None:
    good, missing = tmp_path / "good", tmp_path / "no-such-dir" / "x"
    good.write_bytes(b"precious\n")
    with pytest.raises(FileNotFoundError):
        write_files_atomically([(good, b"new\n"), (missing, b"new\n")])
    assert good.read_bytes() == b"precious\n" and os.listdir(tmp_path) == ["good"]


def test_a_batch_that_fails_while_renaming_keeps_what_was_replaced_and_leaves_no_temp_file(tmp_path: Path) -> None:
    # The second target is a directory with a file in it: its staging succeeds and the rename over it fails.
    first, taken, last = tmp_path / "1", tmp_path / "2", tmp_path / "3"
    first.write_bytes(b"old\n")
    last.write_bytes(b"old\n")
    taken.mkdir()
    (taken / "inside").write_bytes(b"kept\n")
    with pytest.raises(OSError):
        write_files_atomically([(first, b"new\n"), (taken, b"new\n"), (last, b"new\n")])
    assert first.read_bytes() == b"new\n" and last.read_bytes() == b"old\n"
    assert (taken / "inside").read_bytes() == b"kept\n"
    assert sorted(os.listdir(tmp_path)) == ["1", "2", "3"]


def test_a_batch_holds_each_replaced_file_across_its_rename_and_lets_go_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small files too: freeing a replaced file waits on the journal, which a batch would pay in series.
    targets = [tmp_path / f"f{i}" for i in range(3)]
    for path in targets:
        path.write_bytes(b"old\n")
    atomic_file.wait_for_released_files()
    before = open_descriptors()
    held_at_rename: list[bool] = []
    real_replace = os.replace

    def recording_replace(source: str | Path, target: str | Path) -> None:
        held_at_rename.append(os.fspath(target) in _open_files())
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", recording_replace)
    write_files_atomically([(path, b"new\n") for path in targets])
    atomic_file.wait_for_released_files()
    assert held_at_rename == [True, True, True]
    assert open_descriptors() == before
    assert [path.read_bytes() for path in targets] == [b"new\n"] * 3


def _open_files() -> set[str]:
    found = set()
    for fd in open_descriptors():
        with contextlib.suppress(FileNotFoundError):  # the listing's own descriptor, closed by now
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
    return found


_KILLED_MID_BATCH = """
import os, signal, sys
from pathlib import Path
from toolgate.core.atomic_file import write_files_atomically

targets = [Path(sys.argv[1]) / f"f{i:02d}" for i in range(40)]
renamed = 0
real_replace = os.replace

def replace_then_die(source, target):
    global renamed
    if renamed == 17:
        os.kill(os.getpid(), signal.SIGKILL)  # as a power loss would stop it: no cleanup runs
    real_replace(source, target)
    renamed += 1

os.replace = replace_then_die
write_files_atomically([(path, b"new " * 5000) for path in targets])
"""


def test_a_batch_killed_mid_way_leaves_each_file_old_or_new_never_torn(tmp_path: Path) -> None:
    import subprocess
    import sys

    for i in range(40):
        (tmp_path / f"f{i:02d}").write_bytes(b"old " * 3000)
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_MID_BATCH, str(tmp_path)], capture_output=True, start_new_session=True
    )
    assert done.returncode == -9, done.stderr
    contents = [(tmp_path / f"f{i:02d}").read_bytes() for i in range(40)]
    assert contents == [b"new " * 5000] * 17 + [b"old " * 3000] * 23  # the renames before the kill, and no others
    leftovers = sorted(name for name in os.listdir(tmp_path) if not name.startswith("f"))
    assert len(leftovers) == 23 and all(name.endswith(".tmp") for name in leftovers)  # the rest's temp files
