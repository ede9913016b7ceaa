"""Differential property: after any sequence of changes to a small tree (new bytes, same-size edits with the
mtime put back, the executable bit, removals, links, a file and a directory swapping places), each checkpoint's
tree is the one git itself makes of the work tree (`git add -A` into a scratch index, `write-tree`), and its
`changed` list is what `git diff-tree` says changed since the last checkpoint (an unchanged tree makes none)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.checkpoints.git import split_z
from toolgate.checkpoints.store import CheckpointStore

PATHS = ["a.txt", "d.txt", "d/c.txt", "d/e/x.sh", "d"]  # "d.txt" sorts before the directory "d" in a tree
OPERATION = st.tuples(
    st.sampled_from(["write", "same_size", "chmod", "remove", "link", "directory"]),
    st.sampled_from(PATHS),
    st.binary(max_size=6),
)


def _clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _apply(root: Path, operation: tuple[str, str, bytes]) -> None:
    kind, name, data = operation
    path = root / name
    if kind == "remove":
        _clear(path)
        return
    if kind == "chmod":
        if path.is_file() and not path.is_symlink():
            path.chmod(path.stat().st_mode ^ 0o100)
        return
    if kind == "same_size" and path.is_file() and not path.is_symlink():
        old = path.stat()
        path.write_bytes(bytes(b ^ 0x01 for b in path.read_bytes()))
        os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
        return
    for parent in reversed(path.relative_to(root).parents[:-1]):
        if (root / parent).is_symlink() or (root / parent).is_file():
            _clear(root / parent)  # a file where a directory goes: it makes way
    path.parent.mkdir(parents=True, exist_ok=True)
    _clear(path)
    if kind == "link":
        path.symlink_to(data.hex() or "target")
    elif kind == "directory":
        (path / "inner").mkdir(parents=True)
        (path / "inner" / "f").write_bytes(data)
    else:
        path.write_bytes(data)


def _gits_own_tree(store: CheckpointStore, scratch: Path) -> str:
    scratch.unlink(missing_ok=True)
    store.git.run(["add", "-A"], index=scratch)
    return store.git.output(["write-tree"], index=scratch).decode().strip()


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPERATION, min_size=1, max_size=10))
def test_each_checkpoint_is_the_tree_git_makes_and_names_what_changed(
    operations: list[tuple[str, str, bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "ws"
        root.mkdir()
        (root / "a.txt").write_bytes(b"first")
        store = CheckpointStore(Path(temp) / "data", root)
        previous = store.create("s1", turn=1, kind="turn")
        for number, operation in enumerate(operations):
            _apply(root, operation)
            checkpoint = store.create("s1", turn=1, tool_use_id=f"t{number}")
            assert checkpoint.tree == _gits_own_tree(store, Path(temp) / "scratch-index"), operation
            if checkpoint.id == previous.id:
                continue  # an unchanged tree makes no new checkpoint
            names = store.git.output(
                ["diff-tree", "-r", "-z", "--name-only", "--no-renames", previous.tree, checkpoint.tree]
            )
            assert sorted(checkpoint.changed) == sorted(os.fsdecode(p) for p in split_z(names)), operation
            previous = checkpoint
