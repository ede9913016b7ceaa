"""Compaction on the scripted long session (mockmodel/sessions.py): what it costs and what it saves.

The same 40-request session runs twice in this process against the mock model, reading one large file per
request: once with no window (nothing is ever made room for: the baseline), once with a 20k-token window, where
the loop compacts near the window. Token counts are the mock's estimate of each request body (4 characters a
token, the one the mock enforces its window with); times are wall clock on this machine.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import anyio
from pydantic import SecretStr

from bench.report import Figure, Report
from toolgate.agent.events import ChatEvent, Compacted
from toolgate.agent.loop import AgentChat
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.core.permission import NonInteractiveApprover
from toolgate.mockmodel import MockModelServer, RecordedRequest
from toolgate.mockmodel.sessions import FINAL_ANSWER, long_session, write_long_session_files
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.text.tokens import estimate_tokens

WINDOW = 20_000
FILES = 39


def run(report: Report, workdir: Path) -> None:
    anyio.run(_run, report, workdir)


async def _session(
    workdir: Path, files: list[str], window: int | None
) -> tuple[list[RecordedRequest], list[Compacted], float]:
    with MockModelServer(long_session(files, context_window=window)) as mock:
        config = ModelConfig(
            base_url=mock.url, api_key=SecretStr("bench"), model="mock-model", context_window=window or 10_000_000
        )
        runtime = build_runtime(workdir, NonInteractiveApprover(), RuntimeOptions())
        chat = AgentChat(runtime, make_provider(config), system_prompt="bench")
        compactions: list[Compacted] = []

        def hear(event: ChatEvent) -> None:
            if isinstance(event, Compacted):
                compactions.append(event)

        chat.subscribe(hear)
        started = time.perf_counter()
        assert await chat.send("Read every module") == "end_turn"
        elapsed = time.perf_counter() - started
        assert chat.messages[-1].text() == FINAL_ANSWER
        await chat.aclose()
        return mock.requests, compactions, elapsed


def _tokens(requests: list[RecordedRequest]) -> int:
    return sum(estimate_tokens(r.body.decode()) for r in requests)


async def _run(report: Report, workdir: Path) -> None:
    files = write_long_session_files(workdir, FILES)
    full, _, full_seconds = await _session(workdir, files, None)
    small, compactions, small_seconds = await _session(workdir, files, WINDOW)
    main = [r for r in small if r.json.get("tools")]
    summaries = [r for r in small if not r.json.get("tools")]
    note = f"{FILES + 1}-request session, {len(compactions)} compactions in a {WINDOW:,}-token window"
    baseline = "the same session, never compacted"
    report.add(
        Figure("compaction", "input tokens sent, main requests", _tokens(main), "tokens", baseline, _tokens(full), note)
    )
    report.add(
        Figure("compaction", "largest request", max(estimate_tokens(r.body.decode()) for r in main), "tokens",
               baseline, max(estimate_tokens(r.body.decode()) for r in full), note)
    )  # fmt: skip
    summary_in = _tokens(summaries)
    summary_out = sum(c.summary_usage.output_tokens for c in compactions)
    saved = _tokens(full) - _tokens(main)
    report.add(
        Figure("compaction", "summary requests: input + output tokens", summary_in + summary_out, "tokens",
               "tokens saved on the main requests", saved, note)
    )  # fmt: skip
    per_compaction = statistics.median(c.seconds for c in compactions) * 1000
    per_request = small_seconds / len(small) * 1000
    report.add(
        Figure("compaction", "one compaction (summary request + re-reads)", per_compaction, "ms",
               "one request of the session, on average", per_request, note)
    )  # fmt: skip
    report.add(
        Figure(
            "compaction", "whole session, wall time", small_seconds * 1000, "ms", baseline, full_seconds * 1000, note
        )
    )
