"""`path_kind`, the file system fact every sandbox plan (and every launch's check that its plan still holds) rests
on: symbolic links are not followed, and whatever cannot be looked at counts as absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolgate.sandbox.backend import path_kind


def test_each_kind_is_told_apart_without_following_links(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link-to-dir").symlink_to(tmp_path / "dir")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    kinds = {name: path_kind(tmp_path / name) for name in ("file", "dir", "link-to-dir", "dangling", "nowhere")}
    assert kinds == {"file": "file", "dir": "dir", "link-to-dir": "link", "dangling": "link", "nowhere": "absent"}


def test_a_path_below_a_file_or_a_dangling_link_is_absent(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert path_kind(tmp_path / "file" / "child") == "absent"
    assert path_kind(tmp_path / "dangling" / "child") == "absent"


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches any directory")
def test_a_path_in_a_directory_that_cannot_be_searched_is_absent(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "inside").write_text("x")
    closed.chmod(0o600)
    try:
        assert path_kind(closed / "inside") == "absent"
    finally:
        closed.chmod(0o700)
