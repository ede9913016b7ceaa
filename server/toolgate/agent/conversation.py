"""The conversation in a provider-neutral shape, and the rules that keep it sendable.

Messages use the Anthropic block shapes that the tool layer already speaks (`core.messages`); the
OpenAI provider converts from them. Two rules every model API enforces, and this module keeps:

- roles alternate, starting with the user (consecutive messages of one role are merged);
- every tool_use in an assistant message is answered by a tool_result in the very next user message,
  and every tool_result answers a tool_use of the message right before it.

`repair` restores both rules on a conversation read back from disk (after a crash, say): an unanswered
tool_use gets a result saying the session stopped before it finished, and a stray tool_result is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolgate.core.errors import ErrorKind, format_error
from toolgate.core.messages import ImageBlock, TextBlock, ToolResult, ToolUse

Block = Annotated[TextBlock | ImageBlock | ToolUse | ToolResult, Field(discriminator="type")]
Role = Literal["user", "assistant"]


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    role: Role
    content: list[Block]

    def tool_uses(self) -> list[ToolUse]:
        return [b for b in self.content if isinstance(b, ToolUse)]

    def tool_results(self) -> list[ToolResult]:
        return [b for b in self.content if isinstance(b, ToolResult)]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


def user_text(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=[TextBlock(text=text)])


def merge_into(messages: list[ChatMessage], message: ChatMessage) -> None:
    """Append `message`, merging it into the last message when both have the same role.

    A user message that follows a tool_result message keeps the results first (the APIs require tool_result
    blocks to lead the message that answers a tool_use).
    """
    if not message.content:
        return
    if messages and messages[-1].role == message.role:
        last = messages[-1]
        merged = [*last.content, *message.content]
        if message.role == "user":
            merged = [b for b in merged if isinstance(b, ToolResult)] + [
                b for b in merged if not isinstance(b, ToolResult)
            ]
        messages[-1] = ChatMessage(role=last.role, content=merged)
    else:
        messages.append(message)


def unanswered_tool_uses(messages: Sequence[ChatMessage]) -> list[ToolUse]:
    """The tool_uses of the last assistant message that no later user message answers (the loop's view)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            answered = {r.tool_use_id for m in messages[index + 1 :] for r in m.tool_results()}
            return [u for u in messages[index].tool_uses() if u.id not in answered]
    return []


def stopped_result(tool_use_id: str) -> ToolResult:
    """The result for a call whose outcome was lost because the session stopped (a crash, a kill)."""
    return ToolResult(
        tool_use_id=tool_use_id,
        content=format_error(
            ErrorKind.CANCELLED,
            "No result: the session stopped before this call finished, so its outcome was not recorded. "
            "It may have partly taken effect; check the current state before repeating it.",
        ),
        is_error=True,
    )


LOST_START_NOTE = "(The beginning of this conversation could not be recovered.)"


@dataclass
class Repair:
    messages: list[ChatMessage]
    answered: list[str] = field(default_factory=list)  # tool_use ids given a "session stopped" result
    dropped: list[str] = field(default_factory=list)  # tool_result ids that answered nothing

    @property
    def changed(self) -> bool:
        return bool(self.answered or self.dropped)


def repair(raw: Iterable[ChatMessage]) -> Repair:
    """A conversation every API accepts, made from one that may have been cut off or damaged."""
    messages: list[ChatMessage] = []
    for message in raw:
        merge_into(messages, message)

    fixed = Repair(messages=[])
    previous_uses: list[ToolUse] = []
    for message in messages:
        if message.role == "user":
            wanted = {u.id for u in previous_uses}
            kept: list[Block] = []
            for block in message.content:
                if isinstance(block, ToolResult) and block.tool_use_id not in wanted:
                    fixed.dropped.append(block.tool_use_id)
                    continue
                if isinstance(block, ToolResult):
                    wanted.discard(block.tool_use_id)
                kept.append(block)
            missing = [u.id for u in previous_uses if u.id in wanted]
            fixed.answered.extend(missing)
            # The answers go first, in tool_use order, ahead of whatever else the message says.
            content: list[Block] = [stopped_result(i) for i in missing]
            content = _order_results(previous_uses, [*content, *kept])
            if content:
                merge_into(fixed.messages, ChatMessage(role="user", content=content))
            previous_uses = []
        else:
            # A user message left empty (it held only stray results) merges two assistant messages; the first
            # one had no tool_use (else it would have been answered above), so the uses are the second's.
            merge_into(fixed.messages, message)
            previous_uses = fixed.messages[-1].tool_uses()
    if previous_uses:
        fixed.answered.extend(u.id for u in previous_uses)
        fixed.messages.append(ChatMessage(role="user", content=[stopped_result(u.id) for u in previous_uses]))
    if fixed.messages and fixed.messages[0].role == "assistant":
        fixed.messages.insert(0, ChatMessage(role="user", content=[TextBlock(text=LOST_START_NOTE)]))
    return fixed


def _order_results(uses: Sequence[ToolUse], content: Sequence[Block]) -> list[Block]:
    order = {u.id: i for i, u in enumerate(uses)}
    results = sorted((b for b in content if isinstance(b, ToolResult)), key=lambda r: order.get(r.tool_use_id, 0))
    return [*results, *(b for b in content if not isinstance(b, ToolResult))]
