"""What recording a child agent's run as it goes costs per event of the child.

Each call a child makes is two events (its start and its result) that the parent now writes to its transcript as a
`subagent_progress` line each. Measured per event, for a child that has already made 200 calls (finding the call a
result belongs to is a scan of the run's calls): the recorder with its transcript, the recorder alone (the in-memory
record it kept before), and as the baseline the transcript line every one of the parent's own messages costs.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from bench.report import Figure, Report, median_us, time_sync
from toolgate.agent.conversation import ChatMessage
from toolgate.agent.events import ToolCallFinished, ToolCallStarted
from toolgate.agent.subagent_record import RunRecorder
from toolgate.agent.transcript import MessageEntry, Transcript
from toolgate.core.messages import ToolResult

CALLS_BEFORE = 200
REPEAT = 2000


def run(report: Report, workdir: Path) -> None:
    transcript = Transcript(workdir / "transcript.jsonl")
    result = ToolResult(tool_use_id="c-0", content="alpha\n" * 20)
    message = ChatMessage(role="user", content=[result])
    own_line = median_us(time_sync(lambda: transcript.append(MessageEntry(message=message)), REPEAT))

    def per_event(recorder: RunRecorder) -> float:
        for n in range(CALLS_BEFORE):
            recorder.apply(ToolCallStarted(tool_use_id=f"c-{n}", name="Read", input={}, summary="a.txt"))
        counter = itertools.count(CALLS_BEFORE)

        def call() -> None:
            n = next(counter)
            recorder.apply(ToolCallStarted(tool_use_id=f"c-{n}", name="Read", input={}, summary="a.txt"))
            finished = result.model_copy(update={"tool_use_id": f"c-{n}"})
            recorder.apply(
                ToolCallFinished(tool_use_id=f"c-{n}", name="Read", is_error=False, summary="alpha", result=finished)
            )

        return median_us(time_sync(call, REPEAT)) / 2

    kept = per_event(RunRecorder("agent-1", "explore", "bench", transcript.record_subagent_progress))
    in_memory = per_event(RunRecorder("agent-2", "explore", "bench"))
    transcript.close()
    baseline = "one transcript line of the parent's (a tool result)"
    note = f"a child with {CALLS_BEFORE}+ calls, median of {REPEAT} calls"
    report.add(
        Figure("subagents", "child event recorded, with its transcript line", kept, "µs", baseline, own_line, note)
    )
    report.add(
        Figure("subagents", "child event recorded in memory only (before)", in_memory, "µs", baseline, own_line, note)
    )
