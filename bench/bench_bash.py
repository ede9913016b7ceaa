"""Shell figures: classifier throughput on 1,000 agent commands, the cost of one Bash call, and of asking whether a
command's process group still runs.

Baselines from the same run: bashlex parsing the same corpus (the classifier's floor), bash started directly as a
subprocess (the Bash tool's floor), and the signal 0 that only says whether the group exists (zombies count).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio
import bashlex

from bench.report import Figure, Report, median_us
from toolgate.bash.classify import classify_uncached
from toolgate.bash.plain import parse_plain
from toolgate.bash.quoting import scan
from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import build_runtime
from toolgate.shell.executor import command_env, rc_script, run_command
from toolgate.shell.groups import group_alive
from toolgate.shell.output import OutputCapture

CORPUS = Path(__file__).parent / "data" / "commands.jsonl"
_T = TypeVar("_T")


def load_corpus() -> list[str]:
    return [json.loads(line)["command"] for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _per_command_us(fns: Sequence[Callable[[_T], object]], commands: Sequence[_T], passes: int) -> list[float]:
    """Each function's best pass over the corpus, in µs per command. The passes of the functions alternate, so
    a burst of load on this shared machine falls on both sides of the ratio, not on one."""
    best = [float("inf")] * len(fns)
    for _ in range(passes):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            for command in commands:
                fn(command)
            best[k] = min(best[k], time.perf_counter() - start)
    return [b / len(commands) * 1_000_000 for b in best]


def _bashlex_parse(command: str) -> None:
    # The classifier reports bashlex's errors as parse failures; their cost still counts.
    with contextlib.suppress(Exception):
        bashlex.parse(command)


def run(report: Report, workdir: Path) -> None:
    commands = load_corpus()
    classify_us, parse_us = _per_command_us([classify_uncached, _bashlex_parse], commands, passes=5)
    # Plain commands (most of them) are parsed without bashlex (shell.plain); the rest are measured on their own too,
    # so the figure for what still goes through bashlex is not hidden in the average.
    others = [c for c in commands if parse_plain(c, scan(c)) is None]
    report.add(
        Figure(
            "bash",
            f"classify one command ({len(commands)}-command corpus)",
            classify_us,
            "µs",
            "bashlex.parse alone",
            parse_us,
            note=f"{1_000_000 / classify_us:,.0f} commands/s; {len(commands) - len(others)} of {len(commands)} "
            "parsed without bashlex",
        )
    )
    if others:
        others_us, others_parse_us = _per_command_us([classify_uncached, _bashlex_parse], others, passes=5)
        report.add(
            Figure(
                "bash",
                f"classify one command (the {len(others)} that need bashlex)",
                others_us,
                "µs",
                "bashlex.parse alone",
                others_parse_us,
                note=f"{1_000_000 / others_us:,.0f} commands/s",
            )
        )
    _group_alive(report)
    anyio.run(_calls, report, workdir)


def _group_alive(report: Report) -> None:
    """A shell that exited and left a process in the background: what the executor asks after each command, and
    what stopping the group asks every few milliseconds until the leftover is gone."""
    shell = subprocess.Popen(["/bin/bash", "-c", "sleep 300 & exit"], start_new_session=True)
    shell.wait()
    try:
        assert group_alive(shell.pid)
        exists, alive = _per_command_us([_answers_signal_0, group_alive], [shell.pid] * 2_000, passes=5)
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
    processes = sum(entry.isdigit() for entry in os.listdir("/proc"))
    name = "group_alive, a leftover of an exited shell"
    note = f"{processes} processes on the machine"
    report.add(Figure("bash", name, alive, "µs", "killpg(pgid, 0)", exists, note))


def _answers_signal_0(pgid: int) -> None:
    os.killpg(pgid, 0)


async def _calls(report: Report, workdir: Path) -> None:
    runtime = build_runtime(workdir, NonInteractiveApprover())
    counter = iter(range(10**9))
    rc_file = workdir / "bash_env.sh"
    rc_file.write_text(rc_script(), encoding="utf-8")
    env = command_env(BASH_ENV=str(rc_file))

    async def bash_true() -> None:
        [result] = await runtime.orchestrator.run_turn(
            [ToolUse(id=f"b{next(counter)}", name="Bash", input={"command": "true"})]
        )
        assert not result.is_error, result

    async def executor_true() -> None:
        # What the Bash tool's executor alone costs (process group, watchdog, cwd tracking, output capture), so
        # the pipeline's figure can be split into the executor's part and the runner's.
        run = await run_command(
            "true", cwd=workdir, env=env, timeout_s=60, capture=OutputCapture(), cwd_file=workdir / "cwd"
        )
        assert run.exit_code == 0, run

    async def raw_true() -> None:
        await anyio.run_process(["/bin/bash", "-c", "true"], stdin=subprocess.DEVNULL)

    raw, tool = await _interleaved([raw_true, bash_true], 150)
    report.add(
        Figure(
            "bash", "Bash running `true` (whole pipeline)", median_us(tool), "µs", "raw bash -c true", median_us(raw)
        )
    )
    # A pass of its own, with its own baseline: taking a third kind of sample between the two above would change
    # what the pipeline's figure measures (and its ratio moved when it did).
    raw, executor = await _interleaved([raw_true, executor_true], 150)
    report.add(
        Figure(
            "bash",
            "executor.run_command running `true` (no runner)",
            median_us(executor),
            "µs",
            "raw bash -c true",
            median_us(raw),
        )
    )
    await runtime.aclose()


async def _interleaved(fns: Sequence[Callable[[], Awaitable[None]]], repeat: int, warmup: int = 3) -> list[list[float]]:
    """Samples of each, taken in turns (as bench_files does), so that load from other processes hits all alike."""
    for _ in range(warmup):
        for fn in fns:
            await fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, into in zip(fns, samples, strict=True):
            start = time.perf_counter()
            await fn()
            into.append(time.perf_counter() - start)
    return samples
