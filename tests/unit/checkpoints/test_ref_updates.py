"""A session's checkpoint refs go through one long-lived `git update-ref --stdin`: one process for many
checkpoints, in a process group of its own, gone when the session closes; a transaction git refuses is an error
and the next one works."""

from __future__ import annotations

import gc
import os
import subprocess
from pathlib import Path

import pytest

from toolgate.checkpoints.git import write_commit
from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.session import CHECKPOINTS
from toolgate.checkpoints.store import CheckpointStore
from toolgate.core.messages import ToolUse
from toolgate.core.permission import PermissionMode
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover


def _helper(store: CheckpointStore) -> subprocess.Popen[bytes] | None:
    return store.refs._process


async def test_one_process_serves_the_sessions_checkpoints_and_is_gone_when_the_session_closes(
    tmp_path: Path, workspace: Path
) -> None:
    options = RuntimeOptions(mode=PermissionMode.BYPASS, read_settings=False, checkpoints_root=tmp_path / "data")
    runtime = build_runtime(workspace, AllowingApprover(), options)
    checkpoints = runtime.session.deps.get(CHECKPOINTS)
    assert checkpoints is not None
    assert await checkpoints.begin_turn() is None
    helpers = []
    for n in range(3):
        use = ToolUse(id=f"w{n}", name="Write", input={"file_path": str(workspace / "f.txt"), "content": f"{n}\n"})
        [result] = await runtime.orchestrator.run_turn([use])
        assert not result.is_error, result.text()
        helpers.append(_helper(checkpoints.store()))
    process = helpers[0]
    assert process is not None and all(helper is process for helper in helpers)
    assert os.getpgid(process.pid) == process.pid  # its own group: nothing of ours is killed with it
    # The turn's checkpoint and one after each Write, all in the refs other git processes read.
    assert [c.kind for c in checkpoints.checkpoints()] == ["turn", "tool", "tool", "tool"]

    await runtime.aclose()
    assert process.returncode is not None  # ended and reaped with the session
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)


def test_a_refused_transaction_is_an_error_and_the_next_one_works(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "data", workspace, long_lived_git=True)
    try:
        tree = store.capture("s1").tree
        commit = write_commit(store.git, tree, (), "test")
        store.refs.apply(f"create refs/toolgate/s1/000001 {commit}\n")
        first = _helper(store)
        with pytest.raises(CheckpointError, match=r"git update-ref failed: .*refs/toolgate/s1/000001"):
            store.refs.apply(f"create refs/toolgate/s1/000001 {commit}\n")  # it exists already
        assert first is not None and first.returncode is not None  # the failed process is reaped
        store.refs.apply(f"create refs/toolgate/s1/000002 {commit}\n")
        assert _helper(store) not in (None, first)
        listed = store.git.output(["for-each-ref", "--format=%(refname)", "refs/toolgate/s1/"]).decode().split()
        assert listed == ["refs/toolgate/s1/000001", "refs/toolgate/s1/000002"]
    finally:
        store.close()
    # Closed, the store still changes refs, one process each time.
    store.refs.apply("delete refs/toolgate/s1/000002\n")
    assert _helper(store) is None


def test_a_store_nobody_closes_keeps_no_process(tmp_path: Path, workspace: Path) -> None:
    (workspace / "a").write_text("a")
    store = CheckpointStore(tmp_path / "data", workspace)
    store.create("s1", turn=1, kind="turn")
    assert _helper(store) is None


def test_a_long_lived_store_dropped_without_closing_ends_its_process(tmp_path: Path, workspace: Path) -> None:
    # Found by `make fuzz`: the attribution property opened 300 sessions' stores without closing them, and each
    # left a git update-ref waiting on stdin until pytest exited (subprocess keeps an unfinished Popen, and so
    # its pipe, alive after the last reference to it is gone).
    (workspace / "a").write_text("a")
    store = CheckpointStore(tmp_path / "data", workspace, long_lived_git=True)
    store.create("s1", turn=1, kind="turn")
    process = _helper(store)
    assert process is not None and process.returncode is None
    del store
    gc.collect()
    assert process.wait(timeout=30) == 0  # it read the end of its input and exited
