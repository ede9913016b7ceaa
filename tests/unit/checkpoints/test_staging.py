"""A tool call's few changed files go into the shadow index with one pass over each and no git hashing: object
ids computed here equal git's, objects written here are git's own format, and a file changed behind the guard's
back (same size, same mtime) is still captured as it is."""

from __future__ import annotations

import base64
import os
import random
import shutil
import subprocess
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolgate.checkpoints import capture as capture_module
from toolgate.checkpoints.git import RunningGit, ShadowGit, loose_compression, object_id, read_blobs, write_object
from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.staging import RACY_NS
from toolgate.checkpoints.store import CheckpointStore

CONTENTS = [
    b"",
    b"one line\n",
    b"crlf\r\nline two\r\n",
    b"no newline at the end",
    b"\x00\x01binary\xff\xfe\x00",
    "caf\u00e9 \u2713\n".encode(),
    b"latin-1 \xe9\n",
    bytes(range(256)) * 4096,  # 1 MiB
]


def _git_in(store: CheckpointStore, *args: str, stdin: bytes = b"") -> bytes:
    return store.git.output(list(args), index=store.index("s1"), stdin=stdin)


@pytest.mark.parametrize("data", CONTENTS, ids=range(len(CONTENTS)))
def test_an_object_id_computed_here_is_gits(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    hashed = subprocess.run(["git", "hash-object", "--no-filters", str(path)], capture_output=True, check=True)
    assert object_id("blob", data) == hashed.stdout.decode().strip()


def test_objects_written_here_are_read_by_git_and_pass_fsck(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "data", workspace)
    ids = [write_object(store.git, "blob", data) for data in CONTENTS]
    assert write_object(store.git, "blob", CONTENTS[1]) == ids[1]  # already there: left as it is
    assert read_blobs(store.git, ids) == dict(zip(ids, CONTENTS, strict=True))
    (workspace / "a.txt").write_text("a\n")
    first = store.create("s1", turn=1, kind="turn")
    (workspace / "a.txt").write_text("b\n")
    second = store.create("s1", turn=1, tool_use_id="t1", agent_since=first.id)
    # The checkpoint commits are written in-process too: git reads them back, and finds nothing wrong.
    assert store.get("s1", second.id).agent_since == first.id
    assert _git_in(store, "cat-file", "-p", f"{second.commit}^{{tree}}:a.txt") == b"b\n"
    fsck = subprocess.run(
        ["git", "fsck", "--strict", "--no-dangling"], capture_output=True, env=store.git.environment(None)
    )
    assert fsck.returncode == 0, fsck.stderr.decode()


_RANDOM = random.Random(7).randbytes(1 << 20)
_CODE = "".join(f"def handler_{n}(request):\n    return respond(request, {n % 7})\n" for n in range(9000)).encode()
# Big content of each kind, and the way it is compressed: git reads every one alike (zlib, any level).
BIG_CONTENTS = {
    "random bytes: stored": (_RANDOM, (0, zlib.Z_DEFAULT_STRATEGY)),
    "base64: symbols only": (base64.b64encode(_RANDOM), (1, zlib.Z_HUFFMAN_ONLY)),
    "code: repeats": (_CODE, (1, zlib.Z_DEFAULT_STRATEGY)),
    "random start, code after it: repeats": (_RANDOM[:65536] + _CODE, (1, zlib.Z_DEFAULT_STRATEGY)),
    "small random bytes: not sampled": (_RANDOM[:4096], (1, zlib.Z_DEFAULT_STRATEGY)),
}


@pytest.mark.parametrize("kind", BIG_CONTENTS)
def test_big_content_is_compressed_the_way_a_sample_of_it_pays_for_and_git_reads_it(
    tmp_path: Path, workspace: Path, kind: str
) -> None:
    data, way = BIG_CONTENTS[kind]
    assert loose_compression(data) == way
    store = CheckpointStore(tmp_path / "data", workspace)
    oid = write_object(store.git, "blob", data)
    (tmp_path / "copy").write_bytes(data)
    hashed = subprocess.run(["git", "hash-object", "--no-filters", str(tmp_path / "copy")], capture_output=True)
    assert oid == hashed.stdout.decode().strip()
    assert read_blobs(store.git, [oid]) == {oid: data}
    fsck = subprocess.run(["git", "fsck", "--strict"], capture_output=True, env=store.git.environment(None))
    assert fsck.returncode == 0, fsck.stderr.decode()


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    runs: list[list[str]] = []
    start = ShadowGit.start

    def counting(git: ShadowGit, args: Sequence[str], **options: Any) -> RunningGit:
        runs.append(list(args))
        return start(git, args, **options)

    monkeypatch.setattr(ShadowGit, "start", counting)
    return runs


def test_a_tool_calls_change_costs_no_git_hashing_and_no_commit_process(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "a.txt").write_text("a\n")
    store = CheckpointStore(tmp_path / "data", workspace)
    store.create("s1", turn=1, kind="turn")
    runs = _counting(monkeypatch)
    (workspace / "a.txt").write_text("changed\n")
    (workspace / "new.txt").write_text("new\n")
    checkpoint = store.create("s1", turn=1, tool_use_id="t1")
    assert sorted(checkpoint.changed) == ["a.txt", "new.txt"]
    # Two listings side by side, the entries given to the index (git reads no file), the ref (the tree and the
    # commit are written in-process): four processes.
    assert sorted(args[0] for args in runs[:2]) == ["diff-files", "ls-files"]
    assert [args[0] for args in runs[2:]] == ["update-index", "update-ref"]
    assert "--index-info" in runs[2]
    assert checkpoint.tree == store.git.output(["write-tree"], index=store.index("s1")).decode().strip()
    tree = _git_in(store, "ls-tree", "-r", checkpoint.tree).decode()
    assert object_id("blob", b"changed\n") in tree and object_id("blob", b"new\n") in tree


def test_a_file_changed_behind_the_guards_back_with_the_same_size_and_mtime_is_captured(
    tmp_path: Path, workspace: Path
) -> None:
    target = workspace / "code.py"
    store = CheckpointStore(tmp_path / "data", workspace)
    store.create("s1", turn=1, kind="turn")
    target.write_bytes(b"agent's text\n")
    made = store.create("s1", turn=1, tool_use_id="t1")
    mtime = os.stat(target).st_mtime_ns
    # The person's edit right after: as long, and with the mtime put back, as no stat cache could tell.
    target.write_bytes(b"person's txt\n")
    os.utime(target, ns=(mtime, mtime))
    behind = store.create("s1", turn=2, kind="turn")
    assert behind.changed == ["code.py"] and behind.id != made.id
    assert read_blobs(store.git, [object_id("blob", b"person's txt\n")])  # the person's bytes are kept
    assert _git_in(store, "cat-file", "-p", f"{behind.tree}:code.py") == b"person's txt\n"


def test_an_unchanged_file_old_enough_is_settled_and_then_no_longer_listed(tmp_path: Path, workspace: Path) -> None:
    target = workspace / "code.py"
    store = CheckpointStore(tmp_path / "data", workspace)
    store.create("s1", turn=1, kind="turn")
    target.write_bytes(b"agent's text\n")
    store.create("s1", turn=1, tool_use_id="t1")
    listed = _git_in(store, "diff-files", "--name-only", "-z")
    assert listed == b"code.py\0"  # entered with no stat data: the next listing names it, and its bytes are compared

    old = time.time_ns() - 2 * RACY_NS
    os.utime(target, ns=(old, old))
    assert store.create("s1", turn=2, kind="turn").changed == []
    assert _git_in(store, "diff-files", "--name-only", "-z") == b""  # git holds its stat data now

    # Settled, it is git's stat data that watches it: the person's same-size edit shows.
    target.write_bytes(b"person's txt\n")
    changed = store.create("s1", turn=3, kind="turn")
    assert changed.changed == ["code.py"]
    assert _git_in(store, "cat-file", "-p", f"{changed.tree}:code.py") == b"person's txt\n"


def test_a_new_link_is_stored_as_a_link_never_followed(tmp_path: Path, workspace: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("not the workspace's\n")
    store = CheckpointStore(tmp_path / "data", workspace)
    store.create("s1", turn=1, kind="turn")
    (workspace / "f").symlink_to(secret)
    checkpoint = store.create("s1", turn=1, tool_use_id="t1")
    entry = _git_in(store, "ls-tree", checkpoint.tree, "f").decode()
    assert entry.startswith("120000 blob ") and object_id("blob", os.fsencode(secret)) in entry


def test_a_store_made_with_other_object_ids_is_refused_with_what_to_do(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "data", workspace)
    assert (
        subprocess.run(
            ["git", "rev-parse", "--show-object-format"],
            capture_output=True,
            text=True,
            env=store.git.environment(None),
        ).stdout.strip()
        == "sha1"
    )
    with open(store.git.git_dir / "config", "a", encoding="utf-8") as config:
        config.write("[extensions]\n\tobjectFormat = sha256\n")
    with pytest.raises(CheckpointError, match=r"does not use SHA-1 object ids.*delete that directory"):
        CheckpointStore(tmp_path / "data", workspace)


def test_the_listing_started_beside_another_is_reaped_when_the_other_fails(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CheckpointStore(tmp_path / "data", workspace)
    started: list[RunningGit] = []
    start = ShadowGit.start

    def keeping(git: ShadowGit, args: Sequence[str], **options: Any) -> RunningGit:
        started.append(start(git, args, **options))
        return started[-1]

    def failing(_git: ShadowGit, _index: Path) -> tuple[list[object], list[bytes]]:
        raise CheckpointError("listing failed")

    monkeypatch.setattr(ShadowGit, "start", keeping)
    monkeypatch.setattr(capture_module, "_untracked", failing)
    with pytest.raises(CheckpointError, match="listing failed"):
        capture_module.capture(store.git, store.index("s1"))
    assert [running.command for running in started] == ["diff-files"]
    assert started[0].process.returncode is not None  # killed and waited for: no process left behind


def test_a_file_beyond_a_symbolic_link_is_not_read_into_the_store(tmp_path: Path, workspace: Path) -> None:
    # A folder replaced by a link to somewhere else: what its files now name is outside the workspace. git stores
    # nothing beyond a symbolic link, and neither may the in-process staging (it read through the link).
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file").write_text("SECRET from outside the workspace\n")
    (workspace / "dir").mkdir()
    (workspace / "dir" / "file").write_text("inside\n")
    store = CheckpointStore(tmp_path / "data", workspace)
    first = store.create("s1", turn=1, kind="turn")
    shutil.rmtree(workspace / "dir")
    (workspace / "dir").symlink_to(outside)
    second = store.create("s1", turn=1, tool_use_id="t1", agent_since=first.id)
    objects = _git_in(store, "cat-file", "--batch-all-objects", "--batch")
    assert b"SECRET" not in objects
    tree = _git_in(store, "ls-tree", "-r", "--name-only", f"{second.commit}^{{tree}}").split()
    assert b"dir/file" not in tree and b"dir" in tree  # the link is stored as a link
