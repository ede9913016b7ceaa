"""The Bash sandbox: what it costs, and how many approvals it saves.

- The false-ask rate: of ~260 ordinary development commands that write inside the workspace or run its code
  (bench/data/sandbox_dev_commands.txt), the share the ladder asks about, with the sandbox + autoAllow vs
  without (the baseline).
- Bash `true` through the whole pipeline, sandboxed vs not (goal: at most 2x).
- Bash `rg` over an 8,000-file tree, sandboxed vs not (goal: at most 1.1x).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

from bench.report import Figure, Report, median_ms, median_us, time_async
from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sandbox.settings import SandboxRequest

CORPUS = Path(__file__).parent / "data" / "sandbox_dev_commands.txt"
TREE_FILES = 8_000


def load_corpus() -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _runtime(workdir: Path, sandboxed: bool) -> Runtime:
    options = RuntimeOptions(read_settings=False, sandbox=SandboxRequest("on") if sandboxed else None)
    return build_runtime(workdir, NonInteractiveApprover(), options)


async def ask_share(workdir: Path, commands: list[str], sandboxed: bool) -> float:
    runtime = _runtime(workdir, sandboxed)
    try:
        asks = 0
        for command in commands:
            answer = await runtime.check("Bash", {"command": command})
            asks += answer.decision != "allow"
        return asks / len(commands)
    finally:
        await runtime.aclose()


def make_tree(root: Path) -> None:
    for index in range(TREE_FILES):
        directory = root / f"d{index % 80:02d}" / f"s{index % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        body = "".join(f"line {n} of file {index}{' needle' if n == 7 else ''}\n" for n in range(20))
        (directory / f"f{index}.txt").write_text(body, encoding="utf-8")


def run(report: Report, workdir: Path) -> None:
    commands = load_corpus()
    (workdir / "ws").mkdir()
    without = anyio.run(ask_share, workdir / "ws", commands, False)
    with_sandbox = anyio.run(ask_share, workdir / "ws", commands, True)
    report.add(
        Figure(
            "sandbox",
            f"false-ask rate, sandbox + autoAllow ({len(commands)} dev commands)",
            with_sandbox * 100,
            "%",
            "without the sandbox",
            without * 100,
            note=f"{round(with_sandbox * len(commands))} vs {round(without * len(commands))} commands asked about",
        )
    )
    # Two identical trees: the sandbox's stand-ins for absent protected files come and go in its workspace
    # (about a second after its last command), and an unsandboxed rg walking the same tree could meet one
    # going away.
    make_tree(workdir / "tree")
    make_tree(workdir / "boxed-tree")
    anyio.run(_calls, report, workdir / "tree", workdir / "boxed-tree")


async def _calls(report: Report, tree: Path, boxed_tree: Path) -> None:
    # The ripgrep wheel puts rg next to this interpreter.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    plain, boxed = _runtime(tree, False), _runtime(boxed_tree, True)
    counter = iter(range(10**9))

    def call(runtime: Runtime, command: str) -> object:
        async def once() -> None:
            use = ToolUse(id=f"b{next(counter)}", name="Bash", input={"command": command})
            [result] = await runtime.orchestrator.run_turn([use])
            assert not result.is_error, result

        return once

    # Interleaved, so a change in the machine's load hits both alike.
    true_plain: list[float] = []
    true_boxed: list[float] = []
    rg_plain: list[float] = []
    rg_boxed: list[float] = []
    for _ in range(10):
        true_plain += await time_async(call(plain, "true"), 10, warmup=1)  # type: ignore[arg-type]
        true_boxed += await time_async(call(boxed, "true"), 10, warmup=1)  # type: ignore[arg-type]
    for _ in range(5):
        rg_plain += await time_async(call(plain, "rg -c needle ."), 2, warmup=1)  # type: ignore[arg-type]
        rg_boxed += await time_async(call(boxed, "rg -c needle ."), 2, warmup=1)  # type: ignore[arg-type]
    report.add(
        Figure("sandbox", "Bash `true`, sandboxed", median_us(true_boxed), "µs", "unsandboxed", median_us(true_plain))
    )
    report.add(
        Figure(
            "sandbox",
            f"Bash `rg -c needle .` over {TREE_FILES:,} files, sandboxed",
            median_ms(rg_boxed),
            "ms",
            "unsandboxed",
            median_ms(rg_plain),
        )
    )
    await plain.aclose()
    await boxed.aclose()
