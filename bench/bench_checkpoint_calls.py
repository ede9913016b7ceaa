"""What checkpoints add to one file-changing call: an Edit of a 1 KiB file and a Write of 5 MB through the runner
of a session with checkpoints (a checkpoint right before the call and one right after it, as in the editor),
each against the same call in a session without them, in turns, in the same run.

Each session has its own workspace of 200 small files beside the target, so that the checkpoints' listings
have a tree to look at. The turn's own checkpoint is taken once, before the timed calls: a turn of several calls
pays it once, not per call. Each Write's content is new (as an agent's is), each Edit changes one line. A Write
of random bytes writes them as base64, the way random bytes reach a tool that writes text.

Then the store's part alone: a 5 MB object of each kind of content stored as a loose object (what a file a
command made costs a checkpoint), against computing its id, the pass over its bytes that storing cannot skip.
"""

from __future__ import annotations

import base64
import itertools
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from bench.report import Figure, Report, median_us
from toolgate.checkpoints.git import ShadowGit, object_id, write_object
from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime

REPEAT = 25
WRITE_BYTES = 5 * 1024 * 1024
_ids = itertools.count(1)


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)
    _store_objects(report, workdir / "objects.git")


def _workspace(root: Path) -> Path:
    root.mkdir()
    for i in range(200):
        path = root / f"pkg{i // 20}" / f"mod{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# module {i}\n" + "value = 1\n" * 20)
    (root / "small.py").write_text("".join(f"setting_{n:02d} = {n * 3}  # {'-' * 30}\n" for n in range(20)))  # 1 KiB
    return root


async def _runtime(workspace: Path, checkpoints: Path | None) -> Runtime:
    options = RuntimeOptions(mode=PermissionMode.ACCEPT_EDITS, read_settings=False, checkpoints_root=checkpoints)
    runtime = build_runtime(workspace, NonInteractiveApprover(), options)
    if runtime.checkpoints is not None:
        assert await runtime.checkpoints.begin_turn() is None
    await _call(runtime, ToolUse(id="r0", name="Read", input={"file_path": str(workspace / "small.py")}))
    return runtime


async def _call(runtime: Runtime, use: ToolUse) -> None:
    [result] = await runtime.orchestrator.run_turn([use], CancelToken())
    assert not result.is_error, result.text()[:500]


async def _in_turns(*calls: Callable[[], Awaitable[None]]) -> list[list[float]]:
    """Each call once to warm up, then each in turn, so a shared machine's load weighs on all alike."""
    for call in calls:
        await call()
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(REPEAT):
        for call, bucket in zip(calls, samples, strict=True):
            start = time.perf_counter()
            await call()
            bucket.append(time.perf_counter() - start)
    return samples


async def _run(report: Report, workdir: Path) -> None:
    plain = await _runtime(_workspace(workdir / "plain"), None)
    guarded = await _runtime(_workspace(workdir / "guarded"), workdir / "data")
    try:
        assert guarded.checkpoints is not None and plain.checkpoints is None

        def edit(runtime: Runtime) -> Callable[[], Awaitable[None]]:
            flip = itertools.cycle([("setting_07 = 21", "setting_07 = 22"), ("setting_07 = 22", "setting_07 = 21")])
            target = str(runtime.session.workspace / "small.py")

            async def one() -> None:
                old, new = next(flip)
                edit = {"file_path": target, "old_string": old, "new_string": new}
                await _call(runtime, ToolUse(id=f"e{next(_ids)}", name="Edit", input=edit))

            return one

        without, with_checkpoints = await _in_turns(edit(plain), edit(guarded))
        report.add(
            Figure(
                "checkpoints",
                "Edit of a 1 KiB file, checkpointed",
                median_us(with_checkpoints) / 1000,
                "ms",
                "the same Edit without checkpoints",
                median_us(without) / 1000,
                "a checkpoint right before the call and one right after it",
            )
        )

        random_text = base64.b64encode(os.urandom(WRITE_BYTES * 3 // 4))[: WRITE_BYTES - 20].decode() + "\n"
        for body, name in (("x" * (WRITE_BYTES - 20) + "\n", "Write of 5 MB"), (random_text, "Write of 5 MB random")):

            def write(runtime: Runtime, body: str = body) -> Callable[[], Awaitable[None]]:
                target = str(runtime.session.workspace / "big.txt")

                async def one() -> None:
                    n = next(_ids)
                    content = f"{n:018d}\n" + body  # new bytes each time, as an agent's are
                    tool_input = {"file_path": target, "content": content}
                    await _call(runtime, ToolUse(id=f"w{n}", name="Write", input=tool_input))

                return one

            without, with_checkpoints = await _in_turns(write(plain), write(guarded))
            report.add(
                Figure(
                    "checkpoints",
                    f"{name}, checkpointed",
                    median_us(with_checkpoints) / 1000,
                    "ms",
                    "the same Write without checkpoints",
                    median_us(without) / 1000,
                    "the checkpoint after it stores the new content (compressed), as undo needs",
                )
            )
    finally:
        await plain.aclose()
        await guarded.aclose()


def _store_objects(report: Report, git_dir: Path) -> None:
    (git_dir / "objects").mkdir(parents=True)
    git = ShadowGit("git", git_dir, git_dir)  # write_object needs only the objects folder
    code = b"".join(path.read_bytes() for path in sorted(Path(__file__).parent.parent.glob("server/**/*.py")))
    contents = {
        "text": b"x" * WRITE_BYTES,
        "code": (code * (WRITE_BYTES // len(code) + 1))[:WRITE_BYTES],
        "random bytes": os.urandom(WRITE_BYTES),
        "base64": base64.b64encode(os.urandom(WRITE_BYTES * 3 // 4)),
    }
    for kind, data in contents.items():
        hashing: list[float] = []
        storing: list[float] = []
        stored_bytes = 0
        for n in range(REPEAT):
            fresh = n.to_bytes(8, "big") + data[8:]  # a new object each time (an object already there is kept)
            start = time.perf_counter()
            object_id("blob", fresh)
            hashing.append(time.perf_counter() - start)
            start = time.perf_counter()
            oid = write_object(git, "blob", fresh)
            storing.append(time.perf_counter() - start)
            stored = git_dir / "objects" / oid[:2] / oid[2:]
            stored_bytes = stored.stat().st_size
            stored.unlink()
        report.add(
            Figure(
                "checkpoints",
                f"storing a 5 MB object of {kind}",
                statistics.median(storing) * 1000,
                "ms",
                "computing its id",
                statistics.median(hashing) * 1000,
                f"a loose object in git's format, {stored_bytes / len(data):.0%} of the bytes on disk",
            )
        )
