"""Making room in the context window: old tool outputs give way first.

Most of a coding session's context is tool output: files read, commands run, searches. When a request no longer
fits, the loop clears the outputs of older calls and sends it again, before it gives up. The most recent
outputs are kept longest (the last three turns' results, then the last one's, then none), and only outputs big
enough to matter are cleared. Each cleared result keeps its place and its tool_use pairing, and its new text
tells the model what happened and what to do (run the call again). Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolgate.agent.conversation import Block, ChatMessage
from toolgate.core.messages import ToolResult

CLEARED = (
    "[This call's output was cleared to make room in the context window. Run the call again if you still need it.]"
)
# How many of the latest turns keep their tool outputs, tried in this order until something can be cleared.
KEEP_RECENT_TURNS = (3, 1, 0)
# Outputs shorter than this cost little room and are kept (a short error or "File created" still says something).
MIN_CHARS_TO_CLEAR = 400


def _clearable(result: ToolResult) -> bool:
    if isinstance(result.content, str):
        return result.content != CLEARED and len(result.content) >= MIN_CHARS_TO_CLEAR
    return True  # text and images: an image alone costs more than the threshold


def results_to_clear(messages: Sequence[ChatMessage]) -> list[str]:
    """The tool_use ids whose outputs to clear next, or [] when nothing is left worth clearing."""
    turns = [i for i, m in enumerate(messages) if m.role == "user" and m.tool_results()]
    for keep in KEEP_RECENT_TURNS:
        older = turns[: len(turns) - keep] if keep else turns
        ids = [r.tool_use_id for i in older for r in messages[i].tool_results() if _clearable(r)]
        if ids:
            return ids
    return []


def clear_results(messages: Sequence[ChatMessage], tool_use_ids: Sequence[str]) -> list[ChatMessage]:
    """A copy of `messages` with the outputs of `tool_use_ids` replaced by the CLEARED note."""
    wanted = set(tool_use_ids)
    out: list[ChatMessage] = []
    for message in messages:
        if message.role != "user" or not any(r.tool_use_id in wanted for r in message.tool_results()):
            out.append(message)
            continue
        content: list[Block] = [
            b.model_copy(update={"content": CLEARED}) if isinstance(b, ToolResult) and b.tool_use_id in wanted else b
            for b in message.content
        ]
        out.append(ChatMessage(role="user", content=content))
    return out
