"""The Bash sandbox: what it costs, and how many approvals it saves.

- The false-ask rate: of ~260 ordinary development commands that write inside the workspace or run its code
  (bench/data/sandbox_dev_commands.txt), the share the ladder asks about, with the sandbox + autoAllow vs
  without (the baseline).
- Bash `true` through the whole pipeline, sandboxed vs not (goal: at most 1.5x). It is read-only, so it runs
  in the read-only profile; `true` called as a writing command (writes: true) runs in the writable one.
- Bash `git status` in a 2,000-file repository, read-only sandboxed vs not (goal: at most 1.3x).
- Bash `rg` over an 8,000-file tree, sandboxed vs not (goal: at most 1.1x).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from bench.report import Figure, Report, median_ms, median_us, time_async
from toolgate.core.messages import ToolUse
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sandbox.settings import SandboxRequest

CORPUS = Path(__file__).parent / "data" / "sandbox_dev_commands.txt"
TREE_FILES = 8_000
REPOSITORY_FILES = 2_000


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
    make_repository(workdir / "repo")
    make_repository(workdir / "boxed-repo")
    anyio.run(_git_status, report, workdir / "repo", workdir / "boxed-repo")


def make_repository(root: Path) -> None:
    """A committed repository with one changed file (so `git status` has something to say)."""
    for index in range(REPOSITORY_FILES):
        directory = root / f"pkg{index % 40:02d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"m{index}.py").write_text(f"VALUE = {index}\n", encoding="utf-8")
    # Written a minute ago: files as new as the index are "racily clean", and git status re-reads them on every
    # run until it can write the index again, which a read-only run never can (a real tree is rarely that new).
    past = time.time() - 60
    for path in root.rglob("*.py"):
        os.utime(path, (past, past))
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True)
    (root / "pkg00" / "m0.py").write_text("VALUE = -1\n", encoding="utf-8")


def _caller(runtime: Runtime) -> Callable[..., Callable[[], Awaitable[None]]]:
    """`call(command, **input)`: a function that runs that Bash call as its own turn (for `time_async`)."""
    counter = iter(range(10**9))

    def call(command: str, **extra: object) -> Callable[[], Awaitable[None]]:
        async def once() -> None:
            use = ToolUse(id=f"b{next(counter)}", name="Bash", input={"command": command, **extra})
            [result] = await runtime.orchestrator.run_turn([use])
            assert not result.is_error, result

        return once

    return call


async def _git_status(report: Report, repo: Path, boxed_repo: Path) -> None:
    plain, boxed = _runtime(repo, False), _runtime(boxed_repo, True)
    plain_call, boxed_call = _caller(plain), _caller(boxed)
    plain_ms: list[float] = []
    boxed_ms: list[float] = []
    for _ in range(10):  # interleaved, so a change in the machine's load hits both alike
        plain_ms += await time_async(plain_call("git status --short"), 5, warmup=1)
        boxed_ms += await time_async(boxed_call("git status --short"), 5, warmup=1)
    report.add(
        Figure(
            "sandbox",
            f"Bash `git status` ({REPOSITORY_FILES:,} files), read-only sandboxed",
            median_ms(boxed_ms),
            "ms",
            "unsandboxed",
            median_ms(plain_ms),
            note="goal ≤ 1.3x",
        )
    )
    await plain.aclose()
    await boxed.aclose()


async def _calls(report: Report, tree: Path, boxed_tree: Path) -> None:
    # The ripgrep wheel puts rg next to this interpreter.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    plain, boxed = _runtime(tree, False), _runtime(boxed_tree, True)
    plain_call, boxed_call = _caller(plain), _caller(boxed)
    # Writing commands in a workspace of their own: their stand-ins come and go there, never under the rg below
    # (a read-only command walking a tree can meet one going away: "No such file or directory").
    (tree.parent / "writable-ws").mkdir()
    writable = _runtime(tree.parent / "writable-ws", True)
    writable_call = _caller(writable)

    # Interleaved call by call, so a change in the machine's load hits each kind alike (in batches of ten, a burst
    # of load from elsewhere fell on one batch and moved the ratio by ±0.5 between runs).
    true_plain: list[float] = []
    true_boxed: list[float] = []
    true_writable: list[float] = []
    rg_plain: list[float] = []
    rg_boxed: list[float] = []
    calls = (
        (plain_call("true"), true_plain),
        (boxed_call("true"), true_boxed),
        (writable_call("true", writes=True), true_writable),
    )
    for once, _samples in calls:
        await time_async(once, 0, warmup=3)
    for _ in range(100):
        for once, samples in calls:
            samples += await time_async(once, 1, warmup=0)
    for _ in range(5):
        rg_plain += await time_async(plain_call("rg -c needle ."), 2, warmup=1)
        rg_boxed += await time_async(boxed_call("rg -c needle ."), 2, warmup=1)
    report.add(
        Figure(
            "sandbox",
            "Bash `true`, read-only sandboxed",
            median_us(true_boxed),
            "µs",
            "unsandboxed",
            median_us(true_plain),
            note="goal ≤ 1.5x",
        )
    )
    report.add(
        Figure(
            "sandbox",
            "Bash `true` called as a writing command, sandboxed",
            median_us(true_writable),
            "µs",
            "unsandboxed",
            median_us(true_plain),
        )
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
    await writable.aclose()
