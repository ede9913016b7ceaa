"""Shell figures: classifier throughput on 1,000 agent commands, and the cost of one Bash call.

Baselines from the same run: bashlex parsing the same corpus (the classifier's floor), and bash started
directly as a subprocess (the Bash tool's floor).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from pathlib import Path

import anyio
import bashlex

from bench.report import Figure, Report, median_us, time_async
from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import build_runtime
from toolgate.shell.classify import classify_uncached

CORPUS = Path(__file__).parent / "data" / "commands.jsonl"


def load_corpus() -> list[str]:
    return [json.loads(line)["command"] for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _per_command_us(fn: object, commands: list[str], passes: int) -> float:
    assert callable(fn)
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        for command in commands:
            fn(command)
        best = min(best, time.perf_counter() - start)
    return best / len(commands) * 1_000_000


def _bashlex_parse(command: str) -> None:
    # The classifier reports bashlex's errors as parse failures; their cost still counts.
    with contextlib.suppress(Exception):
        bashlex.parse(command)


def run(report: Report, workdir: Path) -> None:
    commands = load_corpus()
    classify_us = _per_command_us(classify_uncached, commands, passes=3)
    parse_us = _per_command_us(_bashlex_parse, commands, passes=3)
    report.add(
        Figure(
            "bash",
            f"classify one command ({len(commands)}-command corpus)",
            classify_us,
            "µs",
            "bashlex.parse alone",
            parse_us,
            note=f"{1_000_000 / classify_us:,.0f} commands/s",
        )
    )
    anyio.run(_calls, report, workdir)


async def _calls(report: Report, workdir: Path) -> None:
    runtime = build_runtime(workdir, NonInteractiveApprover())
    counter = iter(range(10**9))

    async def bash_true() -> None:
        [result] = await runtime.orchestrator.run_turn(
            [ToolUse(id=f"b{next(counter)}", name="Bash", input={"command": "true"})]
        )
        assert not result.is_error, result

    async def raw_true() -> None:
        await anyio.run_process(["/bin/bash", "-c", "true"], stdin=subprocess.DEVNULL)

    raw = await time_async(raw_true, 150)
    tool = await time_async(bash_true, 150)
    report.add(
        Figure(
            "bash", "Bash running `true` (whole pipeline)", median_us(tool), "µs", "raw bash -c true", median_us(raw)
        )
    )
    await runtime.aclose()
