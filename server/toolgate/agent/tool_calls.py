"""The tool calls of one reply: announced in the order the model made them, run through the runtime's
orchestrator, and each heard as finished the moment it ends (completion order), while the results go back to
the model in tool_use order. A call whose input could not be parsed is answered with an error, never run.
"""

from __future__ import annotations

from collections.abc import Callable

from toolgate.agent.call_summaries import call_summary, result_summary
from toolgate.agent.events import ChatEvent, ToolCallFinished, ToolCallStarted
from toolgate.core.errors import ErrorKind, format_error
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.runtime import Runtime


async def run_tool_calls(
    runtime: Runtime,
    uses: list[ToolUse],
    malformed: dict[str, str],
    token: CancelToken,
    emit: Callable[[ChatEvent], None],
    running: set[str],
) -> list[ToolResult]:
    """Every call's result, in `uses` order. `running` holds the ids of the calls under way while they run (the
    chat hears their progress by it), and is emptied once they are done."""
    by_id = {use.id: use for use in uses}
    answered: dict[str, ToolResult] = {}

    def finished(result: ToolResult) -> None:
        # Heard as each call ends (completion order): a quick call's card closes while a slow one runs.
        if result.tool_use_id in answered or result.tool_use_id not in by_id:
            return
        answered[result.tool_use_id] = result
        use = by_id[result.tool_use_id]
        emit(
            ToolCallFinished(
                tool_use_id=use.id,
                name=use.name,
                is_error=result.is_error,
                summary=result_summary(result),
                result=result,
            )
        )

    for use in uses:
        summary = call_summary(runtime, use)
        emit(ToolCallStarted(tool_use_id=use.id, name=use.name, input=use.input, summary=summary))
    for use_id, problem in malformed.items():
        finished(ToolResult(tool_use_id=use_id, content=format_error(ErrorKind.INVALID_INPUT, problem), is_error=True))
    runnable = [u for u in uses if u.id not in answered]
    if runnable:
        running.update(u.id for u in runnable)
        try:
            for result in await runtime.orchestrator.run_turn(runnable, token, on_result=finished):
                finished(result)
        finally:
            running.clear()
    return [answered[u.id] for u in uses]
