"""Writing and removing files beneath a root without following a link (core.atomic_file's `*_beneath`, walked by
core.beneath), on a real filesystem."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from toolgate.core import atomic_file
from toolgate.core.atomic_file import FileBeneath, remove_file_beneath, write_files_beneath
from toolgate.core.beneath import NotAFolder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keys").write_text("theirs\n")
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_link_on_the_way_refuses_and_names_the_folder(root: Path, outside: Path) -> None:
    (root / "a").mkdir()
    (root / "a" / "b").symlink_to(outside)
    with pytest.raises(NotAFolder, match=r"a/b is a symbolic link, not a folder") as caught:
        write_files_beneath(root, [FileBeneath(b"a/b/keys", b"mine\n")], folders="create")
    assert caught.value.folder == "a/b" and caught.value.is_link
    assert sorted(os.listdir(outside)) == ["keys"] and (outside / "keys").read_text() == "theirs\n"


def test_a_file_on_the_way_refuses_too(root: Path) -> None:
    (root / "a").write_text("a file\n")
    with pytest.raises(NotAFolder, match=r"a is a file, not a folder"):
        write_files_beneath(root, [FileBeneath(b"a/keys", b"mine\n")], folders="create")
    assert (root / "a").read_text() == "a file\n"


def test_replace_makes_a_real_folder_where_a_link_was(root: Path, outside: Path) -> None:
    (root / "a").symlink_to(outside)
    write_files_beneath(root, [FileBeneath(b"a/keys", b"mine\n")], folders="replace")
    assert not (root / "a").is_symlink() and (root / "a" / "keys").read_text() == "mine\n"
    assert (outside / "keys").read_text() == "theirs\n"


def test_missing_folders_are_made_only_when_allowed(root: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_files_beneath(root, [FileBeneath(b"x/y/f", b"1")], folders="existing")
    assert os.listdir(root) == []
    write_files_beneath(root, [FileBeneath(b"x/y/f", b"1")], folders="create")
    assert (root / "x" / "y" / "f").read_bytes() == b"1"


def test_a_link_at_the_name_is_replaced_not_written_through(root: Path, outside: Path) -> None:
    (root / "keys").symlink_to(outside / "keys")
    [written] = write_files_beneath(root, [FileBeneath(b"keys", b"mine\n")], folders="create")
    assert not (root / "keys").is_symlink() and (root / "keys").read_text() == "mine\n"
    assert (outside / "keys").read_text() == "theirs\n"
    assert written.st_ino == os.lstat(root / "keys").st_ino


def test_modes_are_kept_or_set_as_asked(root: Path) -> None:
    (root / "kept").write_text("old")
    (root / "kept").chmod(0o640)
    (root / "run").write_text("old")
    (root / "run").chmod(0o640)
    (root / "plain").write_text("old")
    (root / "plain").chmod(0o755)
    write_files_beneath(
        root,
        [FileBeneath(b"kept", b"n"), FileBeneath(b"run", b"n", executable=True), FileBeneath(b"plain", b"n", False)],
        folders="existing",
    )
    modes = {name: stat.S_IMODE(os.stat(root / name).st_mode) for name in ("kept", "run", "plain")}
    assert modes == {"kept": 0o640, "run": 0o750, "plain": 0o644}
    assert sorted(os.listdir(root)) == ["kept", "plain", "run"]  # no temp file left


def test_a_batch_over_many_folders_is_written_in_parts_and_lets_every_folder_go(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(atomic_file, "_MAX_FOLDERS", 2)
    files = [FileBeneath(f"d{i}/f{j}".encode(), f"{i}.{j}".encode()) for i in range(5) for j in range(2)]
    before = _open_descriptors()
    written = write_files_beneath(root, files, folders="create")
    atomic_file.wait_for_released_files()
    assert _open_descriptors() == before
    assert [os.fsdecode(f.path) for f in files] == [f"d{i}/f{j}" for i in range(5) for j in range(2)]
    for file, info in zip(files, written, strict=True):
        path = root / os.fsdecode(file.path)
        assert path.read_bytes() == file.data and os.stat(path).st_ino == info.st_ino


def test_removing_through_a_link_on_the_way_refuses(root: Path, outside: Path) -> None:
    (root / "a").symlink_to(outside)
    with pytest.raises(NotAFolder):
        remove_file_beneath(root, b"a/keys")
    assert (outside / "keys").read_text() == "theirs\n"
    remove_file_beneath(root, b"gone/keys")  # nothing there: nothing to do
    (root / "b").mkdir()
    (root / "b" / "f").write_text("x")
    remove_file_beneath(root, b"b/f")
    assert os.listdir(root / "b") == []


@pytest.mark.parametrize("path", [b"../escape", b"a/../../escape", b"/abs", b"a//b", b"./a"])
def test_a_path_that_does_not_stay_beneath_is_refused(root: Path, path: bytes) -> None:
    with pytest.raises(OSError) as caught:
        write_files_beneath(root, [FileBeneath(path, b"x")], folders="create")
    assert caught.value.errno == errno.EINVAL
    assert os.listdir(root) == [] and not (root.parent / "escape").exists()
