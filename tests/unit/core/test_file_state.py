from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolgate.core.file_state import FileRecord, ReadFileState, state_key


def rec(content: str) -> FileRecord:
    return FileRecord(content=content, mtime_ns=1, offset=1, limit=None, full=True)


def test_least_recently_used_entry_goes_first_when_over_the_count() -> None:
    state = ReadFileState(max_entries=2)
    state.set("/a", rec("a"))
    state.set("/b", rec("b"))
    assert state.get("/a") is not None  # /a is now the most recently used
    state.set("/c", rec("c"))
    assert "/b" not in state and "/a" in state and "/c" in state


def test_total_bytes_bound_evicts_oldest_and_counts_utf8_bytes() -> None:
    state = ReadFileState(max_bytes=10)
    state.set("/a", rec("ééé"))  # 6 bytes
    state.set("/b", rec("xxxx"))  # 4 bytes: exactly at the bound
    assert state.total_bytes == 10 and len(state) == 2
    state.set("/c", rec("y"))
    assert "/a" not in state and state.total_bytes == 5


def test_a_record_larger_than_the_whole_budget_is_not_kept() -> None:
    state = ReadFileState(max_bytes=4)
    state.set("/a", rec("ab"))
    state.set("/big", rec("x" * 5))
    assert "/big" not in state and "/a" in state


def test_replacing_a_record_keeps_the_byte_count_right() -> None:
    state = ReadFileState()
    state.set("/a", rec("12345"))
    state.set("/a", rec("1"))
    assert state.total_bytes == 1 and len(state) == 1
    state.forget("/a")
    assert state.total_bytes == 0 and len(state) == 0


def test_symlinks_and_dotdot_share_one_record(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("x")
    link = tmp_path / "link.txt"
    os.symlink(real, link)
    state = ReadFileState()
    state.set(link, rec("x"))
    assert state.get(real) is not None
    assert state.get(tmp_path / "sub" / ".." / "real.txt") is not None


def test_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ReadFileState(max_entries=0)


def test_a_state_key_is_taken_as_resolved_and_a_path_is_resolved_each_time(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "a.txt")
    state = ReadFileState()
    key = state_key(link)  # one call's resolution: its lookup and its record use it
    assert key == str(tmp_path / "a.txt") and state_key(key) is key
    state.set(key, FileRecord("a", 1, None, None, True))
    link.unlink()
    link.symlink_to(tmp_path / "b.txt")
    assert state.get(key) is not None and (tmp_path / "a.txt") in state  # the key still names a.txt
    assert state.get(link) is None  # the path, resolved afresh, is b.txt now: never read
