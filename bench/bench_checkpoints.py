"""Checkpoints: capturing an 8,000-file tree, unchanged and with one changed file, each against
`git status --porcelain` on the same tree (the goal is at most 2×); restoring 100 changed files against copying
them with shutil."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.report import Figure, Report, median_us, time_sync
from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.store import CheckpointStore
from toolgate.core.atomic_file import wait_for_released_files

FILES = 8000
RESTORED = 100
REPEAT = 11
ROUNDS = 21  # restore rounds; each one also edits and copies back the files


def _alternately(baseline: Callable[[], object], subject: Callable[[], object]) -> tuple[list[float], list[float]]:
    """Time the two in turns, so that the load of a shared machine weighs on both alike (the ratio is the
    figure; one measured long before the other would compare two different machines)."""
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(REPEAT):
        theirs += time_sync(baseline, 1, warmup=0)
        ours += time_sync(subject, 1, warmup=0)
    return theirs, ours


def _tree(root: Path) -> list[Path]:
    paths = []
    for i in range(FILES):
        path = root / f"pkg{i // 200:02d}" / f"mod{i % 200:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i}\n" + "value = 1\n" * 20)
        paths.append(path)
    return paths


def _git_status(root: Path) -> None:
    subprocess.run(["git", "status", "--porcelain"], cwd=root, check=True, capture_output=True)


def run(report: Report, workdir: Path) -> None:
    root = workdir / "ws"
    paths = _tree(root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    # A tree at rest, as a workspace is: files written in the same second as an index are re-read by every
    # later diff until an index is written after them ("racy git"), for git status and for us alike.
    time.sleep(1.1)
    store = CheckpointStore(workdir / "data", root)
    first = store.create("bench", turn=0, kind="turn")
    _alternately(lambda: _git_status(root), lambda: store.create("bench", turn=0))  # warm both up

    status, unchanged = _alternately(lambda: _git_status(root), lambda: store.create("bench", turn=0))
    report.add(
        Figure(
            "checkpoints",
            f"checkpoint, {FILES} files unchanged",
            median_us(unchanged) / 1000,
            "ms",
            "git status --porcelain",
            median_us(status) / 1000,
            "goal ≤ 2×",
        )
    )
    counter = iter(range(10**9))

    def one_change() -> None:
        paths[0].write_text(f"changed {next(counter)}\n")
        store.create("bench", turn=0)

    status, changed = _alternately(lambda: _git_status(root), one_change)
    report.add(
        Figure(
            "checkpoints",
            f"checkpoint, {FILES} files, one changed",
            median_us(changed) / 1000,
            "ms",
            "git status --porcelain",
            median_us(status) / 1000,
            "goal ≤ 2×",
        )
    )

    copies = workdir / "copies"
    copies.mkdir()
    for path in paths[:RESTORED]:
        shutil.copy2(path, copies / path.name)
    restored_dirs = list(dict.fromkeys(path.parent for path in paths[:RESTORED]))

    def edit_hundred() -> None:
        # The files a restore replaced are let go on a thread of their own after it returns; that work is done
        # before the next round, so that it weighs on neither side's time.
        wait_for_released_files()
        for path in paths[:RESTORED]:
            path.write_text("edited\n")

    def durable_copy_back(fsync_threads: int) -> Callable[[], None]:
        # As durable as the restore: each file's bytes are on disk, and so are the directory entries (one fsync
        # per directory, as an atomic restore's renames need), before the copy counts as done.
        def copy_back() -> None:
            for path in paths[:RESTORED]:
                shutil.copy2(copies / path.name, path)
            if fsync_threads == 1:
                list(map(_fsync, paths[:RESTORED]))  # no pool: a thread's start is no part of a plain copy
            else:
                with ThreadPoolExecutor(fsync_threads) as pool:
                    list(pool.map(_fsync, paths[:RESTORED]))
            for directory in restored_dirs:
                _fsync(directory)

        return copy_back

    def restore_hundred() -> None:
        restore(store, "bench", first.id, turn=0)

    # Two copies: fsyncs one after another (what a plain durable copy does), and on as many threads as the
    # restore's (the same disk technique, so the ratio is the restore's own work: capture, plan, temp + rename).
    baselines = {"in turn": durable_copy_back(1), "on 8 threads": durable_copy_back(8)}
    samples = _rounds([*baselines.values(), restore_hundred], before_each=edit_hundred)
    restored = samples[-1]
    for (how, _copy), copied in zip(baselines.items(), samples, strict=False):
        ratios = [mine / base for mine, base in zip(restored, copied, strict=True)]
        report.add(
            Figure(
                "checkpoints",
                f"restore {RESTORED} changed files (incl. the redo checkpoint), vs copy fsyncing {how}",
                median_us(restored) / 1000,
                "ms",
                f"shutil.copy2 of each file, fsyncs {how}, one fsync of the directory",
                median_us(copied) / 1000,
                f"goal ≤ 3×; ratio: the median of {ROUNDS} rounds' ratios, each round timing every side back to "
                f"back (range {min(ratios):.2f}–{max(ratios):.2f}×); the restore also takes a checkpoint first and "
                "writes each file atomically (temp file, rename, directory fsync)",
                paired_ratio=statistics.median(ratios),
            )
        )


def _rounds(sides: list[Callable[[], object]], *, before_each: Callable[[], object]) -> list[list[float]]:
    """Rounds in which each side runs once, back to back, each after `before_each` (untimed), the side that goes
    first rotating: a ratio within a round compares them under the same disk load, which on a shared machine
    swings any side's time several-fold between rounds. Returns each side's samples, round by round."""
    for warm_up in sides:
        before_each()
        warm_up()
    samples: list[list[float]] = [[] for _ in sides]
    for round_ in range(ROUNDS):
        for turn in range(len(sides)):
            side = (round_ + turn) % len(sides)
            before_each()
            samples[side] += time_sync(sides[side], 1, warmup=0)
    return samples


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
