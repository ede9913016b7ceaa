"""File tools on a 5 MB file: Edit (exact and quote-normalised match) and Write, through the full pipeline,
each against a plain read+replace+write of the same file measured in the same run, in turns with it.

The tools do more than the baseline on purpose: staleness check (timestamp, then content), decode and
re-encode in the file's own conventions, a structured patch, and an atomic, durable write. The plain baselines do
no fsync; the tools must (the file, then its directory, so that a crash leaves the old file or the new). So Write is
also measured against a plain encode+write+fsync of the same file: the floor for any durable write.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from bench.report import Figure, Report, median_us
from toolgate.core.messages import ToolUse
from toolgate.core.permission import PermissionMode
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.testing import AllowingApprover

SIZE = 5 * 1024 * 1024
REPEAT = 20


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


def _make_text(marker: str) -> str:
    line = "    value = compute(alpha, beta)  # a line of ordinary code, 64 b\n"
    count = SIZE // len(line)
    lines = [line] * count
    lines[count // 2] = f"    {marker}\n"
    return "".join(lines)


async def _run(report: Report, workdir: Path) -> None:
    runtime = build_runtime(workdir, AllowingApprover(), RuntimeOptions(mode=PermissionMode.BYPASS))
    counter = iter(range(10**9))

    async def call(name: str, **tool_input: object) -> None:
        [result] = await runtime.orchestrator.run_turn([ToolUse(id=f"b{next(counter)}", name=name, input=tool_input)])
        assert not result.is_error, result.text()

    cases = [
        ("Edit 5 MB, exact match", "exact.py", 'label = "first"', 'label = "first"', 'label = "second"'),
        (
            "Edit 5 MB, curly-quote match",
            "curly.py",
            "label = \u201cfirst\u201d",
            'label = "first"',
            'label = "second"',
        ),
    ]
    for title, name, marker, old, new in cases:
        await _bench_edit(report, call, workdir / name, title, marker, old, new)

    target = workdir / "written.txt"
    contents = [_make_text("version one"), _make_text("version two")]
    target.write_text(contents[0], encoding="utf-8")
    await call("Read", file_path=str(target), offset=1, limit=10)
    turn = {"n": 0}

    async def one_write() -> None:
        turn["n"] += 1
        await call("Write", file_path=str(target), content=contents[turn["n"] % 2])

    plain_target = workdir / "plain-written.txt"

    async def plain_write() -> None:
        _plain_write(plain_target, contents[turn["n"] % 2])

    # A file of its own: truncating a file whose blocks the other baseline just made durable costs that one more.
    durable_target = workdir / "plain-durable.txt"

    async def plain_durable_write() -> None:
        _plain_write(durable_target, contents[turn["n"] % 2], fsync=True)

    write_samples, plain_write_samples, durable_samples = await _interleaved(
        one_write, plain_write, plain_durable_write
    )
    for baseline, samples, note in (
        (
            "plain encode+write",
            plain_write_samples,
            "the baseline does no fsync; Write fsyncs the file and its directory",
        ),
        ("plain encode+write+fsync", durable_samples, "both durable: the baseline fsyncs the file (not its directory)"),
    ):
        report.add(
            Figure(
                "files",
                "Write 5 MB",
                median_us(write_samples) / 1000,
                "ms",
                baseline,
                median_us(samples) / 1000,
                note=note,
            )
        )

    # Above, each Write follows the previous one, whose record lets it skip reading the file back. The first write
    # after a Read has only the Read's record: it reads and decodes the old file too. (The Read is not timed.)
    first_samples: list[float] = []
    first_durable: list[float] = []
    for _ in range(REPEAT):
        await call("Read", file_path=str(target), offset=1, limit=10)
        for fn, samples in ((one_write, first_samples), (plain_durable_write, first_durable)):
            start = time.perf_counter()
            await fn()
            samples.append(time.perf_counter() - start)
    report.add(
        Figure(
            "files",
            "Write 5 MB, the first after a Read",
            median_us(first_samples) / 1000,
            "ms",
            "plain encode+write+fsync",
            median_us(first_durable) / 1000,
            note="the old file is read and decoded (for the staleness check and the diff)",
        )
    )
    await runtime.aclose()


async def _bench_edit(
    report: Report, call: Callable[..., Awaitable[None]], path: Path, title: str, marker: str, old: str, new: str
) -> None:
    _put(path, _make_text(marker))
    await call("Read", file_path=str(path), offset=1, limit=10)
    flip = False

    async def one_edit() -> None:
        # Alternate there and back, so every call really changes the file; the record each write leaves
        # means no Read is needed in between.
        nonlocal flip
        a, b = (new, old) if flip else (old, new)
        flip = not flip
        await call("Edit", file_path=str(path), old_string=a, new_string=b)

    # The baseline finds the same line (in the middle of a copy of the file) and writes the copy back.
    plain_path = path.with_name("plain-" + path.name)
    _put(plain_path, _make_text(marker))

    async def plain_edit() -> None:
        _plain_replace(plain_path, marker, marker)

    tool_samples, plain_samples = await _interleaved(one_edit, plain_edit)
    report.add(
        Figure(
            "files",
            title,
            median_us(tool_samples) / 1000,
            "ms",
            "plain read+replace+write",
            median_us(plain_samples) / 1000,
        )
    )


async def _interleaved(*fns: Callable[[], Awaitable[None]]) -> list[list[float]]:
    """Samples of each, taken in turns, so that a busy machine slows them alike and the ratios hold."""
    for fn in fns:
        await fn()
    all_samples: list[list[float]] = [[] for _ in fns]
    for _ in range(REPEAT):
        for fn, samples in zip(fns, all_samples, strict=True):
            start = time.perf_counter()
            await fn()
            samples.append(time.perf_counter() - start)
    return all_samples


def _put(path: Path, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _plain_write(path: Path, text: str, *, fsync: bool = False) -> None:
    with open(path, "wb") as handle:
        handle.write(text.encode("utf-8"))
        if fsync:
            handle.flush()
            os.fsync(handle.fileno())


def _plain_replace(path: Path, old: str, new: str) -> None:
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8")
    with open(path, "wb") as handle:
        handle.write(text.replace(old, new, 1).encode("utf-8"))
