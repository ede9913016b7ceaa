"""What the problems step costs an Edit on the sidecar's side: the same Edit of a 2,000-line file with 50 problems,
through the real runtime, with the step (against a scripted editor that answers at once, in process) and without it
(a headless session), median and p95 in the same run. And what the composer's `@problems` mention costs the sidecar
against the Problems tool it answers like (same editor answer, same listing, plus its own permission check).

What this does not measure: the language server's own time, which the editor waits for (bounded by
`toolgate.problems.waitSeconds`): after a change it reports, the wait is its reporting time plus 0.3 s of quiet; after
a change it stays silent about, 1 s. That part needs a real editor (tests/e2e/test_problems.py runs one).
"""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from bench.report import Figure, Report
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.core.tool import AnyTool
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sidecar.attached_problems import attached_problems_text
from toolgate.sidecar.problems import problems_dependencies
from toolgate.sidecar.protocol_problems import (
    EditorProblem,
    EditorProblemsParams,
    EditorProblemsResult,
    FileProblemsAnswer,
)
from toolgate.sidecar.wire_model import WireModel
from toolgate.testing import run1
from toolgate.tools.edit import EditTool
from toolgate.tools.problems import ProblemsTool
from toolgate.tools.read import ReadTool

EDITS = 200
WARM_UP = 10
LINES = 2000
MENTIONS = 100
MENTIONED_FILES = 200  # each with 5 problems, and a rule-guarded folder and a .env file among them


class InstantEditor:
    """Answers like the extension, with no language server to wait for: an error on each line containing BAD; asked
    about the whole workspace, `known`."""

    def __init__(self, known: Sequence[FileProblemsAnswer] = ()) -> None:
        self.known = list(known)

    async def request(self, method: str, params: WireModel, result: type[Any]) -> Any:
        assert isinstance(params, EditorProblemsParams)
        if params.files is None:
            return EditorProblemsResult(files=self.known, waited_seconds=0)
        files = []
        for wanted in params.files or []:
            text = await anyio.Path(wanted.path).read_text(encoding="utf-8")
            assert wanted.content_sha256 in (None, hashlib.sha256(text.encode()).hexdigest())
            problems = [
                EditorProblem(line=i, character=0, severity="error", message="no BAD", source="bench")
                for i, line in enumerate(text.splitlines())
                if "BAD" in line
            ]
            files.append(FileProblemsAnswer(path=wanted.path, covered=True, settled=True, problems=problems))
        return EditorProblemsResult(files=files, waited_seconds=1.5)


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)
    anyio.run(_mention, report, workdir)


class _Editing:
    """One runtime editing one file over and over (each edit changes the same line again)."""

    def __init__(self, runtime: Runtime, path: Path) -> None:
        self.runtime, self.path, self.count = runtime, path, 0

    async def once(self) -> float:
        old, new = f"line {LINES // 2} {self.count}", f"line {LINES // 2} {self.count + 1}"
        self.count += 1
        start = time.perf_counter()
        result = await run1(self.runtime, "Edit", file_path=str(self.path), old_string=old, new_string=new)
        elapsed = time.perf_counter() - start
        assert not result.is_error, result.text()
        return elapsed


def _write_file(path: Path) -> None:
    rows = [f"line {n}{' BAD' if n % 40 == 0 else ''}" for n in range(LINES)]
    rows[LINES // 2] = f"line {LINES // 2} 0"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


async def _run(report: Report, workdir: Path) -> None:
    tools: list[AnyTool] = [ReadTool(), EditTool()]
    editing: dict[str, _Editing] = {}
    for name, dependencies in (("headless", {}), ("with the step", problems_dependencies(InstantEditor()))):
        workspace = workdir / name.replace(" ", "-")
        workspace.mkdir()
        path = workspace / "main.ts"
        _write_file(path)
        options = RuntimeOptions(
            mode=PermissionMode.BYPASS, tools=tools, dependencies=dependencies, read_settings=False
        )
        runtime = build_runtime(workspace, NonInteractiveApprover(), options)
        assert not (await run1(runtime, "Read", file_path=str(path))).is_error
        editing[name] = _Editing(runtime, path)
    samples: dict[str, list[float]] = {name: [] for name in editing}
    try:
        for round_ in range(WARM_UP + EDITS):
            for name, one in editing.items():  # alternating: the machine's load changes under both alike
                elapsed = await one.once()
                if round_ >= WARM_UP:
                    samples[name].append(elapsed)
    finally:
        for one in editing.values():
            await one.runtime.aclose()
    note = f"{EDITS} edits of a {LINES}-line file with {LINES // 40} problems; scripted editor, no language server"
    for label, pick in (("median", statistics.median), ("p95", _p95)):
        report.add(
            Figure(
                "problems",
                f"Edit with the problems step, {label}",
                pick(samples["with the step"]) * 1000,
                "ms",
                "the same Edit, headless",
                pick(samples["headless"]) * 1000,
                note=note,
            )
        )


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


async def _mention(report: Report, workdir: Path) -> None:
    workspace = workdir / "mention"
    (workspace / "private").mkdir(parents=True)
    names = [f"src{n % 10}/f{n}.ts" for n in range(MENTIONED_FILES)] + ["private/key.ts", ".env"]
    known = []
    for name in names:
        path = workspace / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(f"const v{i} = BAD\n" for i in range(5)), encoding="utf-8")
        problems = [
            EditorProblem(line=i, character=10, severity="warning" if i % 2 else "error", message="no BAD")
            for i in range(5)
        ]
        known.append(FileProblemsAnswer(path=str(path), covered=True, settled=True, problems=problems))
    options = RuntimeOptions(
        mode=PermissionMode.DEFAULT,
        tools=[ProblemsTool()],
        dependencies=problems_dependencies(InstantEditor(known)),
        rules={"deny": ["Read(private/**)"]},
        read_settings=False,
    )
    runtime = build_runtime(workspace, NonInteractiveApprover(), options)

    async def tool() -> None:
        assert not (await run1(runtime, "Problems")).is_error

    async def mention() -> None:
        assert (await attached_problems_text(runtime, None)).startswith("The person attached the editor's problems:")

    samples: dict[str, list[float]] = {"tool": [], "mention": []}
    runs: dict[str, Callable[[], Awaitable[None]]] = {"tool": tool, "mention": mention}
    try:
        for round_ in range(WARM_UP + MENTIONS):
            for name, once in runs.items():  # alternating: the machine's load changes under both alike
                start = time.perf_counter()
                await once()
                if round_ >= WARM_UP:
                    samples[name].append(time.perf_counter() - start)
    finally:
        await runtime.aclose()
    note = f"{MENTIONED_FILES + 2} files with 5 problems each (2 left out by the filter); scripted editor"
    report.add(
        Figure(
            "problems",
            "@problems mention of the workspace, median",
            statistics.median(samples["mention"]) * 1000,
            "ms",
            "the Problems tool on the same workspace",
            statistics.median(samples["tool"]) * 1000,
            note=note,
        )
    )
