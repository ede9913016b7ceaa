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
from typing import Any, TypeVar

from pydantic import BaseModel

from toolgate.agent.conversation import Block, ChatMessage
from toolgate.agent.subagent_record import SubagentCall, SubagentRun
from toolgate.agent.transcript import CompactionMark
from toolgate.core.messages import TextBlock, ToolResult, ToolUse
from toolgate.text.redact import redact

_Model = TypeVar("_Model", bound=BaseModel)


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
            return _kept([self.value(item) for item in value], value)
        if isinstance(value, dict):
            pairs = [(self.value(key), self.value(item)) for key, item in value.items()]
            unchanged = all(k is key and v is item for (k, v), (key, item) in zip(pairs, value.items(), strict=True))
            return value if unchanged else _distinct_keys(pairs)
        return value

    def message(self, message: ChatMessage) -> ChatMessage:
        return _with(message, content=_kept([self._block(block) for block in message.content], message.content))

    def compaction(self, mark: CompactionMark) -> CompactionMark:
        return _with(mark, summary=self.text(mark.summary))

    def run(self, run: SubagentRun) -> SubagentRun:
        """A child's run: its task, each call's lines (a grandchild's run inside its call) and its answer."""
        calls = _kept([self._call(call) for call in run.calls], run.calls)
        return _with(run, description=self.text(run.description), calls=calls, answer=self.text(run.answer))

    def _call(self, call: SubagentCall) -> SubagentCall:
        result = None if call.result_summary is None else self.text(call.result_summary)
        child = None if call.subagent is None else self.run(call.subagent)
        return _with(call, summary=self.text(call.summary), result_summary=result, subagent=child)

    def _block(self, block: Block) -> Block:
        if isinstance(block, TextBlock):
            return _with(block, text=self.text(block.text))
        if isinstance(block, ToolUse):
            return _with(block, input=self.value(block.input))
        if isinstance(block, ToolResult):
            # Redacted when recorded, but with the shapes known then: a result recorded before a shape was added
            # (or by another version) may hold one. Passing results again is most of the cost of redacting an export.
            if isinstance(block.content, str):
                return _with(block, content=self.text(block.content))
            return _with(block, content=_kept([self._block(part) for part in block.content], block.content))
        return block  # an image: data, not text


def _distinct_keys(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """The pairs as a dict, a redacted key that now equals another numbered (`[REDACTED x] (2)`): two secrets as
    keys redact to the same text, and a dict would keep only the last value, an export silently missing data."""
    kept: dict[Any, Any] = {}
    for key, item in pairs:
        name, n = key, 1
        while name in kept:
            n += 1
            name = f"{key} ({n})"
        kept[name] = item
    return kept


def _with(model: _Model, **fields: Any) -> _Model:
    """`model` with `fields` in place, or `model` itself when each is the object it holds already (none redacted)."""
    changes = {name: value for name, value in fields.items() if value is not getattr(model, name)}
    return model.model_copy(update=changes) if changes else model


def _kept(items: list[Any], original: list[Any]) -> list[Any]:
    """`original` itself when every item came back as the same object, else the new list."""
    return original if all(a is b for a, b in zip(items, original, strict=True)) else items


def redaction_note(found: Collection[str]) -> str | None:
    """The sentence at the top of an export saying what was taken out of it; None when nothing was."""
    if not found:
        return None
    kinds = ", ".join(dict.fromkeys(found))
    count = len(found)
    values = f"{count} secret value{'s' if count > 1 else ''}"
    return f"toolgate took {values} ({kinds}) out of this export; each reads `[REDACTED <kind>]` where it was."
