"""The tree remembered beside a session's index is trusted only for the index it was made for: a crash between
writing the index and its companion (either one written, the other not, or the companion torn) leaves the next
checkpoint's tree what git itself makes of the work tree (`git add -A` into a scratch index, `write-tree`)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from toolgate.checkpoints.index_tree import companion
from toolgate.checkpoints.store import CheckpointStore


def _gits_own_tree(store: CheckpointStore, scratch: Path) -> str:
    scratch.unlink(missing_ok=True)
    store.git.run(["add", "-A"], index=scratch)
    return store.git.output(["write-tree"], index=scratch).decode().strip()


def _index_not_written(store: CheckpointStore, workspace: Path) -> None:
    """The companion was written for an index that then did not reach the disk (the one before is there): the
    file goes back to what that older index holds, so only a companion trusted blindly still names the change."""
    index = store.index("s1")
    before = index.read_bytes()
    (workspace / "a.txt").write_text("second version\n")
    store.create("s1", turn=1, tool_use_id="t1")
    index.write_bytes(before)
    (workspace / "a.txt").write_text("first\n")


def _companion_not_written(store: CheckpointStore, workspace: Path) -> None:
    """The index was written with a change and the companion kept naming the tree before it."""
    before = companion(store.index("s1")).read_bytes()
    (workspace / "a.txt").write_text("second version\n")
    store.create("s1", turn=1, tool_use_id="t1")
    companion(store.index("s1")).write_bytes(before)


def _companion_cut_short(store: CheckpointStore, workspace: Path) -> None:
    record = companion(store.index("s1"))
    record.write_bytes(record.read_bytes()[:30])


def _companion_half_written(store: CheckpointStore, workspace: Path) -> None:
    """The new record's write over the old one stopped after the tree: the tree before, the new index's checksum."""
    record = companion(store.index("s1"))
    before = record.read_bytes()
    (workspace / "a.txt").write_text("second version\n")
    store.create("s1", turn=1, tool_use_id="t1")
    after = record.read_bytes()
    cut = after.index(b" index ")
    record.write_bytes(before[:cut] + after[cut:])


def _companion_gone(store: CheckpointStore, workspace: Path) -> None:
    companion(store.index("s1")).unlink()


@pytest.mark.parametrize(
    "crash",
    [_index_not_written, _companion_not_written, _companion_cut_short, _companion_half_written, _companion_gone],
    ids=lambda f: f.__name__,
)
def test_after_a_crash_between_the_index_and_its_tree_the_next_checkpoint_is_gits_own_tree(
    tmp_path: Path, workspace: Path, crash: Callable[[CheckpointStore, Path], None]
) -> None:
    (workspace / "a.txt").write_text("first\n")
    (workspace / "d").mkdir()
    (workspace / "d" / "b.txt").write_text("b\n")
    store = CheckpointStore(tmp_path / "data", workspace)
    store.create("s1", turn=1, kind="turn")
    crash(store, workspace)
    after = store.create("s1", turn=2, kind="turn")
    assert after.tree == _gits_own_tree(store, tmp_path / "scratch-index")
    # And the one after that, made from the tree just written, again.
    (workspace / "d" / "c.txt").write_text("c\n")
    last = store.create("s1", turn=2, tool_use_id="t2")
    assert last.tree == _gits_own_tree(store, tmp_path / "scratch-index")
    assert store.git.output(["cat-file", "-p", f"{last.tree}:a.txt"]) == (workspace / "a.txt").read_bytes()


def test_the_remembered_tree_names_the_index_it_was_made_for(tmp_path: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("first\n")
    store = CheckpointStore(tmp_path / "data", workspace)
    made = store.create("s1", turn=1, kind="turn")
    index = store.index("s1")
    checksum = index.read_bytes()[-20:].hex()  # git's own, over all the index holds before it
    fields = f"tree {made.tree} index {checksum}".encode()
    assert companion(index).read_bytes() == b"%s crc %08x\n" % (fields, zlib.crc32(fields))
