"""Secrets taken out of everything an export holds, at export time. Pure: no I/O.

Tool results are redacted before they are recorded (core/runner.py), but a transcript also keeps what the model and
the person wrote: a Bash command line with a token, a Write's content with a key, a pasted credential in a prompt, a
child's call summaries and answer. A person who shares an export expects none of them in it, so every text an export
is made from passes text/redact.py once, here, before either format is rendered from it. Rendering from redacted
texts (rather than redacting the rendered document) keeps the JSON valid with each string in its place, and
shortening a text for a Markdown line can never cut a secret into a piece no shape matches any more.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from toolgate.agent.conversation import Block, ChatMessage
from toolgate.agent.subagent_record import SubagentCall, SubagentRun
from toolgate.agent.transcript import CompactionMark
from toolgate.core.messages import TextBlock, ToolResult, ToolUse
from toolgate.text.redact import redact


class ExportRedactor:
    """Redacts the texts of a stored conversation, each once, and keeps the kind of every value it took out.

    A text with nothing to take out comes back as the same object, and so does every model holding only such texts:
    an export without secrets is rendered from exactly what it was rendered from before.
    """

    def __init__(self, known_secrets: Collection[str] = ()) -> None:
        self._known = tuple(known_secrets)
        self.found: list[str] = []  # the kind of each value taken out, in the order met

    def text(self, text: str) -> str:
        done = redact(text, self._known)
        self.found.extend(kind for kind, _ in done.found)
        return done.text

    def value(self, value: Any) -> Any:
        """A JSON value (a tool's input) with every string in it redacted, keys included, however deep."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            items = [self.value(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, dict):
            pairs = [(self.value(key), self.value(item)) for key, item in value.items()]
            unchanged = all(k is key and v is item for (k, v), (key, item) in zip(pairs, value.items(), strict=True))
            return value if unchanged else dict(pairs)
        return value

    def message(self, message: ChatMessage) -> ChatMessage:
        blocks = [self._block(block) for block in message.content]
        if all(a is b for a, b in zip(blocks, message.content, strict=True)):
            return message
        return message.model_copy(update={"content": blocks})

    def compaction(self, mark: CompactionMark) -> CompactionMark:
        summary = self.text(mark.summary)
        return mark if summary is mark.summary else mark.model_copy(update={"summary": summary})

    def run(self, run: SubagentRun) -> SubagentRun:
        """A child's run: its task, each call's lines (a grandchild's run inside its call) and its answer."""
        changes: dict[str, Any] = {}
        description, answer = self.text(run.description), self.text(run.answer)
        if description is not run.description:
            changes["description"] = description
        if answer is not run.answer:
            changes["answer"] = answer
        calls = [self._call(call) for call in run.calls]
        if any(a is not b for a, b in zip(calls, run.calls, strict=True)):
            changes["calls"] = calls
        return run.model_copy(update=changes) if changes else run

    def _call(self, call: SubagentCall) -> SubagentCall:
        changes: dict[str, Any] = {}
        summary = self.text(call.summary)
        if summary is not call.summary:
            changes["summary"] = summary
        if call.result_summary is not None:
            result = self.text(call.result_summary)
            if result is not call.result_summary:
                changes["result_summary"] = result
        if call.subagent is not None:
            child = self.run(call.subagent)
            if child is not call.subagent:
                changes["subagent"] = child
        return call.model_copy(update=changes) if changes else call

    def _block(self, block: Block) -> Block:
        if isinstance(block, TextBlock):
            text = self.text(block.text)
            return block if text is block.text else TextBlock(text=text)
        if isinstance(block, ToolUse):
            given = self.value(block.input)
            return block if given is block.input else block.model_copy(update={"input": given})
        if isinstance(block, ToolResult):
            # Redacted when recorded, but a transcript written before that, or by another version, may hold one.
            if isinstance(block.content, str):
                content: Any = self.text(block.content)
            else:
                content = [self._block(part) for part in block.content]
                if all(a is b for a, b in zip(content, block.content, strict=True)):
                    content = block.content
            return block if content is block.content else block.model_copy(update={"content": content})
        return block  # an image: data, not text


def redaction_note(found: Collection[str]) -> str | None:
    """The sentence at the top of an export saying what was taken out of it; None when nothing was."""
    if not found:
        return None
    kinds = ", ".join(dict.fromkeys(found))
    count = len(found)
    values = f"{count} secret value{'s' if count > 1 else ''}"
    return f"toolgate took {values} ({kinds}) out of this export; each reads `[REDACTED <kind>]` where it was."
