"""The one-line summaries a tool card shows: of the call ("Run git status", "Update 4 todos") and of its result.

Live, they travel in tool_call_started / tool_call_finished events; a stored conversation keeps only the
calls and results, so `toolgate/chat/history` computes the same lines again with these functions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from toolgate.agent.conversation import ChatMessage
from toolgate.core.messages import ToolResult, ToolUse

if TYPE_CHECKING:
    from toolgate.runtime import Runtime  # a type only: the wire models import this module at start-up

log = logging.getLogger("toolgate.agent")

SUMMARY_CHARS = 200


class CallSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    summary: str
    result_summary: str | None = None  # None: no result was recorded for the call


def call_summary(runtime: Runtime, use: ToolUse) -> str:
    prepared = runtime.runner.prepare(use)
    if prepared.tool is not None and prepared.tool_input is not None:
        try:
            return prepared.tool.summary(prepared.tool_input, runtime.session.workspace)
        except Exception:
            log.exception("%s: summary raised", use.name)
    return use.name


def result_summary(result: ToolResult) -> str:
    """The first meaningful line of a result, shortened, for a tool card's collapsed state."""
    for line in result.text().splitlines():
        line = line.strip()
        if line and not line.startswith(("<tool_error", "</tool_error")):
            return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"
    return "(no output)"


def call_summaries(runtime: Runtime, messages: Sequence[ChatMessage]) -> dict[str, CallSummary]:
    """Both summaries of every call in a conversation, by tool_use id."""
    summaries: dict[str, CallSummary] = {}
    for message in messages:
        for use in message.tool_uses():
            summaries[use.id] = CallSummary(summary=call_summary(runtime, use))
        for result in message.tool_results():
            known = summaries.get(result.tool_use_id)
            if known is not None:
                known.result_summary = result_summary(result)
    return summaries
