"""Additional working directories (`--add-dir`, `additionalDirectories`): captured beside the workspace.

Each is a root of its own in the workspace's shadow repository (the same objects, its own work tree, index
and ignore rules). A checkpoint keeps each root's tree in its `roots` and as a parent commit, so that the
tree lives as long as the checkpoint. Paths of these roots are shown absolute (the workspace's stay relative).
A directory inside the workspace is captured with it already, and one that holds the workspace would capture
it twice: neither is a root of its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from toolgate.checkpoints.capture import Captured
from toolgate.checkpoints.git import ShadowGit, split_z, write_commit
from toolgate.checkpoints.models import Checkpoint, SkippedFile


def separate_roots(workspace: Path, roots: Sequence[Path]) -> list[Path]:
    """The directories of `roots` that need capturing on their own, each once."""
    found: list[Path] = []
    for root in roots:
        resolved = root.resolve()
        inside = resolved.is_relative_to(workspace) or workspace.is_relative_to(resolved)
        if not inside and resolved.is_dir() and resolved not in found:
            found.append(resolved)
    return found


def capture_roots(
    workspace: Path, roots: Sequence[Path], capture_root: Callable[[Path], Captured]
) -> dict[str, Captured]:
    """Each separate root captured by `capture_root` (the store's, under its lock), keyed by its path."""
    return {os.fsdecode(root): capture_root(root) for root in separate_roots(workspace, roots)}


def root_skipped(captured: dict[str, Captured]) -> list[SkippedFile]:
    return [
        skip.model_copy(update={"path": os.path.join(root, skip.path)})
        for root, capture in captured.items()
        for skip in capture.skipped
    ]


def root_changes(git: ShadowGit, previous: Checkpoint | None, captured: dict[str, Captured]) -> list[str]:
    """The files of the roots that changed since `previous`, as absolute paths."""
    names: list[str] = []
    for root, capture in captured.items():
        before = previous.roots.get(root) if previous is not None else None
        if before == capture.tree:
            continue
        if before is None:
            listing = git.output(["ls-tree", "-r", "-z", "--name-only", capture.tree])
        elif capture.changed is not None and capture.base == before:
            listing = b"\0".join(capture.changed)
        else:
            listing = git.output(["diff-tree", "-r", "-z", "--name-only", "--no-renames", before, capture.tree])
        names += [os.path.join(root, os.fsdecode(path)) for path in split_z(listing)]
    return names


def root_commits(git: ShadowGit, trees: dict[str, str]) -> list[str]:
    """One commit per root tree, for the checkpoint's commit to name as parents."""
    return [write_commit(git, tree, (), f"toolgate root {root}") for root, tree in trees.items()]
