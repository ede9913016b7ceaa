"""Glob and Grep through the whole pipeline vs raw `rg` with the same arguments, on a 20k-file / ~200 MB tree.

The baseline is the exact ripgrep command the tool ran (recorded from the call), started with
`subprocess.run` and its output read in full: what the search costs without toolgate. The difference is
toolgate's share: the runner, parsing, sorting (newest first means a stat per file listed), pagination.
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from bench.report import Figure, Report, median_ms
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import Runtime, build_runtime
from toolgate.testing import run1
from toolgate.tools._ripgrep import RIPGREP, VCS_EXCLUDES, RgRun, Ripgrep, SearchAt, find_ripgrep

FILES = 20_000
TOTAL_BYTES = 200 * 1024 * 1024
REPEAT = 15
EXTENSIONS = (".py", ".ts", ".js", ".md", ".txt", ".rs", ".go", ".json")


def make_tree(root: Path) -> None:
    """Deterministic text files in 40×25 directories, ~10 KiB each, with distinct modification times."""
    rnd = random.Random(42)
    words = [f"w{i}" for i in range(2000)] + ["def", "class", "return", "import", "self", "value", "result"]
    pool = [" ".join(rnd.choice(words) for _ in range(rnd.randint(3, 14))) for _ in range(5000)]
    per_file = TOTAL_BYTES // FILES
    for i in range(FILES):
        directory = root / f"pkg{i % 40}" / f"mod{(i // 40) % 25}"
        directory.mkdir(parents=True, exist_ok=True)
        lines: list[str] = []
        size = 0
        while size < per_file:
            line = rnd.choice(pool)
            if rnd.random() < 0.0005:
                line += " NEEDLE_TOKEN"
            lines.append(line)
            size += len(line) + 1
        path = directory / f"file{i}{EXTENSIONS[i % len(EXTENSIONS)]}"
        path.write_text("\n".join(lines) + "\n")
        stamp = 1_600_000_000_000_000_000 + i * 1_000_000_000
        os.utime(path, ns=(stamp, stamp))


@dataclass(frozen=True)
class RecordingRipgrep(Ripgrep):
    """The real runner, remembering the arguments of its last run (to replay them raw: the root by its name, as
    a person would type it; the tools hand ripgrep the root opened where the permission decision saw it)."""

    calls: list[list[str]] = field(default_factory=list, compare=False)

    async def run(self, args: Sequence[str], at: SearchAt | None = None) -> RgRun:
        self.calls.append([*args, "--", str(at.root)] if at is not None else list(args))
        return await super().run(args, at)


def _cpu() -> float:
    """CPU seconds used so far by this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _raw(binary: Path, args: list[str]) -> None:
    subprocess.run([str(binary), "--no-config", *args], capture_output=True, check=False)


def run(report: Report, workdir: Path) -> None:
    tree = workdir / "tree"
    started = time.perf_counter()
    make_tree(tree)
    print(f"  (generated {FILES:,} files in {time.perf_counter() - started:.1f} s)", flush=True)
    anyio.run(_run, report, tree)


async def _run(report: Report, tree: Path) -> None:
    binary = find_ripgrep()
    assert binary is not None, "ripgrep is not installed"
    recorder = RecordingRipgrep(binary)
    runtime = build_runtime(tree, NonInteractiveApprover())
    runtime.session.deps.override(RIPGREP, recorder)
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("Grep files_with_matches (~1.7k files)", "Grep", {"pattern": "NEEDLE_TOKEN"}),
        ("Grep content (~4.5k lines, 250 shown)", "Grep", {"pattern": "NEEDLE_TOKEN", "output_mode": "content"}),
        ("Grep content (~20k lines, 250 shown)", "Grep", {"pattern": "w123 ", "output_mode": "content"}),
        ("Grep count", "Grep", {"pattern": "NEEDLE_TOKEN", "output_mode": "count"}),
        ("Glob **/*.py (2.5k of 20k files)", "Glob", {"pattern": "**/*.py"}),
        ("Glob **/* (all 20k files)", "Glob", {"pattern": "**/*"}),
    ]
    try:
        for name, tool, tool_input in cases:
            await _case(report, runtime, recorder, binary, name, tool, tool_input)
        await _glob_against_rg_glob(report, runtime, binary, tree, "**/file1*.py")
    finally:
        await runtime.aclose()


async def _case(
    report: Report,
    runtime: Runtime,
    recorder: RecordingRipgrep,
    binary: Path,
    name: str,
    tool: str,
    tool_input: dict[str, Any],
) -> None:
    result = await run1(runtime, tool, **tool_input)  # warm-up; also the arguments to replay
    assert not result.is_error, result.text()[:500]
    args = recorder.calls[-1]
    ours: list[float] = []
    raw: list[float] = []
    ours_cpu: list[float] = []
    raw_cpu: list[float] = []
    for _ in range(REPEAT):  # interleaved, so load from other processes hits both alike
        cpu, start = _cpu(), time.perf_counter()
        _raw(binary, args)
        raw.append(time.perf_counter() - start)
        raw_cpu.append(_cpu() - cpu)
        cpu, start = _cpu(), time.perf_counter()
        await run1(runtime, tool, **tool_input)
        ours.append(time.perf_counter() - start)
        ours_cpu.append(_cpu() - cpu)
    report.add(
        Figure(
            "search-cpu",
            name,
            median_ms(ours_cpu),
            "ms",
            "raw rg, same arguments",
            median_ms(raw_cpu),
            note="CPU time of this process and ripgrep (user + system): steadier than wall time on a busy machine",
        )
    )
    report.add(
        Figure(
            "search",
            name,
            median_ms(ours),
            "ms",
            "raw rg, same arguments",
            median_ms(raw),
            note="rg " + " ".join(a for a in args if not a.startswith("--glob=!")),
        )
    )


async def _glob_against_rg_glob(report: Report, runtime: Runtime, binary: Path, tree: Path, pattern: str) -> None:
    """Glob against ripgrep doing the filtering itself with `--glob`: the cheapest listing there is. (Glob
    cannot hand its pattern to `--glob`, which lists .gitignored files that match; it narrows ripgrep's walk
    with a file type, which honours .gitignore, and matches the rest of the pattern itself.)"""
    args = ["--files", "--hidden", "--sortr=modified", f"--glob={pattern}", "--", str(tree)]
    # The same, also leaving out version-control directories as Glob does (its --hidden would list .git otherwise).
    # Beside --glob they cost ripgrep nothing (one override matcher holds all globs); Glob pays some 10–15% for them
    # on this tree, because beside its file type they are a second matcher, consulted for every entry.
    vcs_args = [*args[:-2], *VCS_EXCLUDES, *args[-2:]]
    result = await run1(runtime, "Glob", pattern=pattern)
    assert not result.is_error, result.text()[:500]
    walls: dict[str, list[float]] = {"ours": [], "raw": [], "vcs": []}
    cpus: dict[str, list[float]] = {"ours": [], "raw": [], "vcs": []}

    async def ours() -> None:
        await run1(runtime, "Glob", pattern=pattern)

    async def raw() -> None:
        _raw(binary, args)

    async def raw_vcs() -> None:
        _raw(binary, vcs_args)

    for _ in range(REPEAT):
        for key, fn in (("raw", raw), ("ours", ours), ("vcs", raw_vcs)):
            cpu, start = _cpu(), time.perf_counter()
            await fn()
            walls[key].append(time.perf_counter() - start)
            cpus[key].append(_cpu() - cpu)
    hits = len((await anyio.run_process([str(binary), "--no-config", *args], check=False)).stdout.splitlines())
    name = f"Glob {pattern} ({hits:,} of {FILES:,} files)"
    cpu_note = "CPU time of this process and ripgrep (user + system): steadier than wall time on a busy machine"
    report.add(
        Figure(
            "search-cpu",
            name,
            median_ms(cpus["ours"]),
            "ms",
            "rg --files --sortr=modified --glob",
            median_ms(cpus["raw"]),
            note=cpu_note,
        )
    )
    report.add(
        Figure(
            "search",
            name,
            median_ms(walls["ours"]),
            "ms",
            "rg --files --sortr=modified --glob",
            median_ms(walls["raw"]),
            note="rg " + " ".join(args[:-2]),
        )
    )
    report.add(
        Figure(
            "search",
            name,
            median_ms(walls["ours"]),
            "ms",
            "the same rg, with Glob's VCS excludes",
            median_ms(walls["vcs"]),
            note="rg " + " ".join(args[:-2]) + " --glob=!.git (and .svn .hg .bzr .jj .sl)",
        )
    )
