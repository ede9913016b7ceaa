"""Hook runs per second through the dispatcher (payload, scrubbed environment, pipes, merge), a plain child and in
the session's sandbox, against `subprocess.run` of the same no-op command with the same stdin in the same run."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from bench.report import Figure, Report
from toolgate.core.permission import NonInteractiveApprover
from toolgate.permissions.decide import PermissionEngine
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sandbox.runtime import SANDBOX
from toolgate.sandbox.settings import SandboxRequest

RUNS = 30
PASSES = 3
COMMAND = "cat >/dev/null"


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


async def _rate(one: Callable[[], Awaitable[object]]) -> float:
    await one()  # warm up (the sandbox starts here)
    best = 0.0
    for _ in range(PASSES):
        start = time.perf_counter()
        for _ in range(RUNS):
            await one()
        best = max(best, RUNS / (time.perf_counter() - start))
    return best


async def _one_stop(engine: PermissionEngine, rt: Runtime) -> None:
    outcome = await engine.hooks.run("Stop", rt.session, {"stop_reason": "end_turn", "continuations": 0})
    assert outcome.ran == 1 and not outcome.problems, outcome.problems


async def _run(report: Report, workdir: Path) -> None:
    workspace = workdir / "ws"
    workspace.mkdir()
    hooks_file = workdir / "hooks.json"  # a --settings file: the person's own, so trusted without review
    entry = {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND}]}
    hooks_file.write_text(json.dumps({"hooks": {"Stop": [entry]}}))
    environ = {"PATH": os.environ.get("PATH", os.defpath), "XDG_CONFIG_HOME": str(workdir / "xdg")}
    payload = json.dumps({"hook_event_name": "Stop", "stop_reason": "end_turn"}).encode()

    async def baseline() -> None:
        await anyio.to_thread.run_sync(
            lambda: subprocess.run(["/bin/sh", "-c", COMMAND], input=payload, capture_output=True, check=True)
        )

    for sandbox in ("off", "on"):
        engine = PermissionEngine(workspace, home=workdir, environ=environ, settings_files=[hooks_file])
        options = RuntimeOptions(policy=engine, sandbox=SandboxRequest(sandbox))
        rt = build_runtime(workspace, NonInteractiveApprover(), options)
        if sandbox == "on" and not rt.session.deps.get(SANDBOX).state().active:
            await rt.aclose()
            continue  # no sandbox on this machine: nothing to measure

        baseline_rate = await _rate(baseline)  # right before: the machine's load changes between figures
        rate = await _rate(functools.partial(_one_stop, engine, rt))
        await rt.aclose()
        report.add(
            Figure(
                "hooks",
                f"a no-op hook through the dispatcher, sandbox {sandbox}",
                rate,
                "runs/s",
                "subprocess.run of the same command and stdin",
                baseline_rate,
                note=f"best of {PASSES} x {RUNS} runs",
            )
        )
