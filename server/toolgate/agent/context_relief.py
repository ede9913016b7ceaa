"""Making room in the context window: old tool outputs give way first.

Most of a coding session's context is tool output: files read, commands run, searches. When a request no longer
fits, the loop clears the outputs of older calls and sends it again, before it gives up. The most recent
outputs are kept longest (the last three turns' results, then the last one's, then none), and only outputs big
enough to matter are cleared. Each cleared result keeps its place and its tool_use pairing, and its new text
names the reference under which the whole output is kept (the loop stores it in the session's output store), so
the model reads it back with ToolOutput / ToolOutputGrep instead of running a call again that may have side
effects or whose file has changed since. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from toolgate.agent.conversation import Block, ChatMessage
from toolgate.core.messages import ToolResult

CLEARED_PREFIX = "[This call's output was cleared to make room in the context window."
# The note when the output could not be stored (or, in transcripts written before references, was not).
CLEARED = f"{CLEARED_PREFIX} Run the call again if you still need it.]"
# How many of the latest turns keep their tool outputs, tried in this order until something can be cleared.
KEEP_RECENT_TURNS = (3, 1, 0)
# Outputs shorter than this cost little room and are kept (a short error or "File created" still says something).
MIN_CHARS_TO_CLEAR = 400


def cleared_note(ref: str | None) -> str:
    """What replaces a cleared output: where the whole output is kept, or (`ref` None) that it is gone."""
    if ref is None:
        return CLEARED
    return (
        f"{CLEARED_PREFIX} The whole output is stored as {ref}: read it with "
        f'ToolOutput(ref="{ref}", offset=<first line>, limit=<count>) or search it with '
        f'ToolOutputGrep(ref="{ref}", pattern=<regex>). Run the call again only for a fresh result.]'
    )


def is_cleared(result: ToolResult) -> bool:
    return isinstance(result.content, str) and result.content.startswith(CLEARED_PREFIX)


def _clearable(result: ToolResult) -> bool:
    if isinstance(result.content, str):
        return not is_cleared(result) and len(result.content) >= MIN_CHARS_TO_CLEAR
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


def find_results(messages: Sequence[ChatMessage], tool_use_ids: Sequence[str]) -> list[ToolResult]:
    """The results of `tool_use_ids`, in conversation order."""
    wanted = set(tool_use_ids)
    return [r for m in messages if m.role == "user" for r in m.tool_results() if r.tool_use_id in wanted]


def clear_results(messages: Sequence[ChatMessage], notes: Mapping[str, str] | Sequence[str]) -> list[ChatMessage]:
    """A copy of `messages` with the outputs of the calls in `notes` replaced by their note (tool_use id →
    note; a plain sequence of ids gets the CLEARED note, which names no reference)."""
    replace = dict(notes) if isinstance(notes, Mapping) else dict.fromkeys(notes, CLEARED)
    out: list[ChatMessage] = []
    for message in messages:
        if message.role != "user" or not any(r.tool_use_id in replace for r in message.tool_results()):
            out.append(message)
            continue
        content: list[Block] = [
            b.model_copy(update={"content": replace[b.tool_use_id]})
            if isinstance(b, ToolResult) and b.tool_use_id in replace
            else b
            for b in message.content
        ]
        out.append(ChatMessage(role="user", content=content))
    return out
