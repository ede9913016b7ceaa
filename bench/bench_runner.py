"""Runner overhead: a Read through the whole pipeline vs a plain open/read; a batch of Reads in parallel."""

from __future__ import annotations

from pathlib import Path

import anyio

from bench.report import Figure, Report, median_us, time_async, time_sync
from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import build_runtime


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


async def _run(report: Report, workdir: Path) -> None:
    files = []
    for i in range(10):
        path = workdir / f"file{i}.txt"
        path.write_text(("x" * 63 + "\n") * 16)  # 1 KiB
        files.append(path)
    runtime = build_runtime(workdir, NonInteractiveApprover())
    counter = iter(range(10**9))

    def use(path: Path) -> ToolUse:
        # A different offset each time defeats the "unchanged since last read" shortcut: we time real reads.
        n = next(counter)
        return ToolUse(id=f"t{n}", name="Read", input={"file_path": str(path), "offset": 1 + n % 2})

    def plain_read() -> None:
        with open(files[0], "rb") as handle:
            handle.read().decode("utf-8")

    plain = time_sync(plain_read, 2000)

    async def one_read() -> None:
        # A token per turn, as the agent loop, the sidecar and `run-tools` all pass one.
        [result] = await runtime.orchestrator.run_turn([use(files[0])], CancelToken())
        assert not result.is_error, result

    piped = await time_async(one_read, 2000)
    report.add(
        Figure(
            "runner",
            "Read 1 KiB through the full pipeline",
            median_us(piped),
            "µs",
            "plain open+read+decode",
            median_us(plain),
        )
    )

    async def batch(concurrent: bool) -> None:
        uses = [use(p) for p in files]
        if concurrent:
            results = await runtime.orchestrator.run_turn(uses, CancelToken())
        else:
            results = [r for u in uses for r in await runtime.orchestrator.run_turn([u], CancelToken())]
        assert not any(r.is_error for r in results)

    sequential = await time_async(lambda: batch(False), 200)
    concurrent = await time_async(lambda: batch(True), 200)
    report.add(
        Figure(
            "runner",
            "10 Reads as one concurrent batch",
            median_us(concurrent),
            "µs",
            "10 Reads one after another",
            median_us(sequential),
        )
    )
    await runtime.aclose()
