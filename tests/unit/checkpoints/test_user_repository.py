"""Checkpoints and restores never touch the user's repository: its index, HEAD, refs, stash, config and status
are byte-identical before and after; only the files themselves change where the session changed them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.store import CheckpointStore

from .trees import git, snapshot


def _fingerprint(repo: Path) -> dict[str, bytes]:
    git_dir = repo / ".git"
    files = {
        name: (git_dir / name).read_bytes()
        for name in ("index", "HEAD", "config", "packed-refs")
        if (git_dir / name).exists()
    }
    listing = sorted(str(p.relative_to(git_dir)) for p in git_dir.rglob("*"))
    return {
        **files,
        "listing": hashlib.sha256("\n".join(listing).encode()).digest(),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "stash": git(repo, "stash", "list"),
        "worktrees": git(repo, "worktree", "list", "--porcelain"),
        "status": git(repo, "--no-optional-locks", "status", "--porcelain=v2", "--untracked-files=all"),
    }


def _busy_repository(tmp_path: Path, workspace: Path) -> None:
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "tracked.txt").write_text("committed\n")
    (workspace / "staged.txt").write_text("committed\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "first")
    (workspace / "stashed.txt").write_text("stash me\n")
    git(workspace, "add", "stashed.txt")
    git(workspace, "stash", "-q")
    git(workspace, "worktree", "add", "-q", str(tmp_path / "other-tree"))
    (workspace / "staged.txt").write_text("staged change\n")
    git(workspace, "add", "staged.txt")
    (workspace / "tracked.txt").write_text("unstaged change\n")
    (workspace / "untracked.txt").write_text("new\n")


def test_a_session_of_edits_and_restores_leaves_the_users_repository_byte_identical(
    tmp_path: Path, workspace: Path
) -> None:
    _busy_repository(tmp_path, workspace)
    before = _fingerprint(workspace)
    files_before = snapshot(workspace)
    store = CheckpointStore(tmp_path / "data", workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "tracked.txt").write_text("the agent's edit\n")
    (workspace / "staged.txt").unlink()
    (workspace / "made.sh").write_text("#!/bin/sh\n")
    (workspace / "made.sh").chmod(0o755)
    store.create("s1", turn=1, tool_use_id="tu1")
    dry = restore(store, "s1", first.id, turn=2, dry_run=True)
    assert dry.changes
    report = restore(store, "s1", first.id, turn=2)
    assert snapshot(workspace) == files_before
    assert report.redo is not None
    restore(store, "s1", report.redo, turn=2)
    restore(store, "s1", first.id, turn=3)
    store.gc()
    assert _fingerprint(workspace) == before
    assert not any(store.git.git_dir.is_relative_to(p) for p in (workspace,))


def test_a_workspace_that_is_a_submodule_or_worktree_reads_but_never_writes_its_git_dir(
    tmp_path: Path, workspace: Path
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    (library / "lib.c").write_text("int lib;\n")
    git(library, "add", ".")
    git(library, "commit", "-q", "-m", "lib")
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(workspace, "commit", "-q", "-m", "with submodule")
    submodule = workspace / "lib"
    assert (submodule / ".git").is_file()
    (workspace / ".git" / "modules" / "lib" / "info").mkdir(parents=True, exist_ok=True)
    (workspace / ".git" / "modules" / "lib" / "info" / "exclude").write_text("*.o\n")
    (submodule / "lib.o").write_text("object")
    before = _fingerprint(workspace)
    sub_before = git(submodule, "--no-optional-locks", "status", "--porcelain=v2")
    store = CheckpointStore(tmp_path / "data", submodule)
    first = store.create("s1", turn=1, kind="turn")
    assert sorted(first.changed) == ["lib.c"]  # the submodule's own info/exclude hides lib.o
    (submodule / "lib.c").write_text("changed")
    restore(store, "s1", first.id, turn=2)
    assert (submodule / "lib.c").read_text() == "int lib;\n"
    assert _fingerprint(workspace) == before
    assert git(submodule, "--no-optional-locks", "status", "--porcelain=v2") == sub_before


def test_a_workspace_that_is_not_a_repository(tmp_path: Path, workspace: Path) -> None:
    (workspace / "plain.txt").write_text("p")
    store = CheckpointStore(tmp_path / "data", workspace)
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "plain.txt").write_text("q")
    restore(store, "s1", first.id, turn=2)
    assert (workspace / "plain.txt").read_text() == "p"
    assert not (workspace / ".git").exists()
