"""Permission decisions per second over the Bash corpus, against a no-op policy through the same call path.

Both sides look the tool up, validate the input and build a call context; the engine then classifies the
command (the classifier's cache is cleared before each pass, so parsing is counted) and walks the ladder. A
second figure keeps the classifier's cache warm, which leaves the engine's own cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel
from tests.unit.permissions.corpus import Case, build_layout, load_cases
from tests.unit.permissions.everyday import DEV_CORPUS, READ_ONLY_CORPUS, ask_rate

from bench.report import Figure, Report
from toolgate.bash.classify import classify
from toolgate.core.context import HOME_DIR, ToolContext
from toolgate.core.messages import ToolUse
from toolgate.core.permission import Decision, NonInteractiveApprover
from toolgate.core.tool import AnyTool
from toolgate.permissions.decide import PermissionEngine
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

PASSES = 5


class NoOpPolicy:
    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        return Decision(behavior="allow", reason="no-op")


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)
    anyio.run(_ask_rates, report, workdir)


async def _ask_rates(report: Report, workdir: Path) -> None:
    """How often ordinary work asks, in default mode with no sandbox (issue 27 §6: it must not go up)."""
    for corpus in (READ_ONLY_CORPUS, DEV_CORPUS):
        workspace = workdir / f"everyday-{corpus.stem}" / "workspace"
        workspace.mkdir(parents=True)
        measured = await ask_rate(corpus, workspace)
        report.add(
            Figure(
                "permissions",
                f"ask rate, {corpus.name} ({measured.commands} commands)",
                100 * measured.rate,
                "% asked",
                note="default mode, sandbox off, no rules",
            )
        )


async def _run(report: Report, workdir: Path) -> None:
    layout = build_layout(workdir)
    cases = load_cases(layout)
    runtimes: dict[Any, Runtime] = {}
    for case in cases:
        key = (case.mode, case.allow, case.ask, case.deny)
        if key not in runtimes:
            engine = PermissionEngine(
                layout.workspace,
                home=layout.home,
                cli_rules={"allow": case.allow, "ask": case.ask, "deny": case.deny},
                read_settings_files=False,
                classifier=classify,
            )
            rt = build_runtime(
                layout.workspace,
                NonInteractiveApprover(),
                RuntimeOptions(mode=case.mode, policy=engine, tools=builtin_tools()),
            )
            rt.session.deps.override(HOME_DIR, layout.home)
            runtimes[key] = rt
    noop = build_runtime(
        layout.workspace, NonInteractiveApprover(), RuntimeOptions(policy=NoOpPolicy(), tools=builtin_tools())
    )

    def runtime_for(case: Case) -> Runtime:
        return runtimes[(case.mode, case.allow, case.ask, case.deny)]

    clear: Callable[[], None] = classify.cache_clear

    async def engine_pass(cold: bool = True) -> None:
        if cold:
            clear()
        for case in cases:
            await runtime_for(case).check("Bash", {"command": case.command})

    async def warm_pass() -> None:
        await engine_pass(cold=False)

    async def noop_pass() -> None:
        for case in cases:
            runner = noop.runner
            prepared = runner.prepare(ToolUse(id="b", name="Bash", input={"command": case.command}))
            assert prepared.tool is not None and prepared.tool_input is not None
            ctx = runner.new_context("b")
            await noop.session.policy.decide(prepared.tool, prepared.tool_input, ctx)
            await ctx.deps.aclose()

    async def rate(one_pass: Callable[[], Any]) -> float:
        await one_pass()  # warm up
        best = 0.0
        for _ in range(PASSES):
            start = time.perf_counter()
            await one_pass()
            best = max(best, len(cases) / (time.perf_counter() - start))
        return best

    engine_rate = await rate(engine_pass)
    warm_rate = await rate(warm_pass)
    noop_rate = await rate(noop_pass)
    report.add(
        Figure(
            "permissions",
            f"Bash corpus decisions ({len(cases)} cases)",
            engine_rate,
            "decisions/s",
            "no-op policy, same call path",
            noop_rate,
            note=f"classifier cache cleared each pass; best of {PASSES}",
        )
    )
    report.add(
        Figure(
            "permissions",
            "Bash corpus decisions, classifier cache warm",
            warm_rate,
            "decisions/s",
            "no-op policy, same call path",
            noop_rate,
            note="the engine's own cost: rules, paths, safety, suggestions",
        )
    )
    for rt in [*runtimes.values(), noop]:
        await rt.aclose()
