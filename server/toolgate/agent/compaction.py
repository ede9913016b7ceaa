"""Keeping a long session inside the model's context window: clearing old outputs, and compaction.

Two ways to make room, cheapest first where it is safe:

- **Compaction** (near the window, on the API's "prompt too long" error, or asked for): the older part of the
  conversation is summarised by the model in a side request that offers no tools, into fixed sections
  (compaction_plan.SECTIONS); the recent turns stay verbatim with every tool_use paired. Files whose contents
  left the context are forgotten by readFileState (Edit/Write ask for a new Read), except the few most recently
  read, which are read again and re-attached as Read results. The system prompt and the tool definitions are
  not touched, so the prompt cache's prefix survives.
- **Clearing** (the fallback when compaction fails or cannot help): older tool outputs are replaced by a note
  naming the output-store reference their whole output is kept under (context_relief).

The transcript on disk keeps every message; a `compacted` entry marks where the summary took over, so a resume
starts from the compacted conversation and a rewind to before it gets the full one back.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import anyio

from toolgate.agent import compaction_plan as plan
from toolgate.agent.chat_hooks import ChatHooks, context_note
from toolgate.agent.context_relief import clear_results, cleared_note, find_results, results_to_clear
from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.events import ChatEvent, Compacted, CompactionFailed, ContextCleared, Usage, UsageReport
from toolgate.agent.model_catalog import context_tokens, cost_usd
from toolgate.agent.providers.base import ModelError, ModelRequest, Provider, ReplyCompleted, StreamEvent
from toolgate.agent.transcript import ClearedEntry, CompactedEntry, Transcript
from toolgate.core.file_state import state_key
from toolgate.core.messages import TextBlock, ToolResult, ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.output_store import OUTPUT_STORE
from toolgate.runtime import Runtime
from toolgate.text.tokens import estimate_tokens
from toolgate.tools.todo_write import TODOS

log = logging.getLogger("toolgate.agent.compaction")

Trigger = Literal["auto", "overflow", "manual"]
# The summary's own reply limit: a summary longer than this has stopped being one.
SUMMARY_MAX_TOKENS = 8_192


class ChatHost(Protocol):
    """What compaction needs of the AgentChat (agent/loop.py) it works for."""

    messages: list[ChatMessage]
    transcript: Transcript
    provider: Provider
    runtime: Runtime
    hooks: ChatHooks

    def emit(self, event: ChatEvent) -> None: ...


class CompactionError(Exception):
    """The summary could not be made; `message` says why, for a person."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class Compaction:
    messages: list[ChatMessage]  # the conversation from now on
    head: list[ChatMessage]  # its new start (summary, re-attached files); the rest is the kept tail
    kept: int
    summarised: int
    summary: str
    reattached: list[str]
    forgotten: list[str]
    summary_usage: Usage = field(default_factory=Usage)


def request_tokens(request: ModelRequest) -> int:
    return estimate_tokens(request.model_dump_json())


# --- the summary --------------------------------------------------------------------------------------------
async def summarise(
    provider: Provider, older: list[ChatMessage], window: int, todos: str, focus: str | None, token: CancelToken
) -> tuple[str, Usage]:
    budget_chars = int(plan.SUMMARY_INPUT_SHARE * window) * 4
    instruction = plan.summary_instruction(plan.render_for_summary(older, budget_chars), todos, focus)
    request = ModelRequest(
        system=plan.SUMMARY_SYSTEM,
        tools=[],
        messages=[user_text(instruction)],
        max_tokens=min(provider.max_tokens, SUMMARY_MAX_TOKENS),
    )
    replies: list[ReplyCompleted] = []

    def sink(event: StreamEvent) -> None:
        if isinstance(event, ReplyCompleted):
            replies.append(event)

    with anyio.CancelScope() as scope:
        token.watch(scope)  # an interrupt stops the summary too
        try:
            await provider.stream(request, sink)
        except ModelError as exc:
            raise CompactionError(f"The summary request failed: {exc.message}") from None
        finally:
            token.unwatch(scope)
    if scope.cancelled_caught:
        raise CompactionError("The summary request was interrupted; the conversation is as it was.")
    text = "".join(b.text for b in replies[-1].content if not isinstance(b, ToolUse)) if replies else ""
    if not text.strip():
        raise CompactionError("The summary request came back empty.")
    if replies[-1].stop_reason == "max_tokens":
        raise CompactionError("The summary was cut off at its length limit.")
    missing = plan.missing_sections(text)
    if missing:
        log.warning("the summary has no section %s", ", ".join(missing))
    return text, replies[-1].usage


# --- readFileState --------------------------------------------------------------------------------------------
def _read_paths(runtime: Runtime, messages: list[ChatMessage]) -> set[str]:
    workspace = runtime.session.workspace
    return {
        state_key(workspace / str(use.input["file_path"]))
        for m in messages
        for use in m.tool_uses()
        if use.name == "Read" and isinstance(use.input, dict) and "file_path" in use.input
    }


async def reattach_recent_files(
    runtime: Runtime, tail: list[ChatMessage], budget: int, token: CancelToken
) -> tuple[list[tuple[ToolUse, ToolResult]], list[str]]:
    """Forget every file read before the cut (its content leaves the context), then read the few most recent
    of them again, as long as they fit in `budget` tokens. Returns the Read pairs to attach and the paths that
    stay forgotten."""
    file_state = runtime.session.file_state
    still_seen = _read_paths(runtime, tail)
    left = [path for path, _ in file_state.records() if path not in still_seen]  # oldest first
    for path in left:
        file_state.forget(path)
    # Only files inside the session's working directories: reading one elsewhere may ask the person, and a
    # compaction must not put an approval in front of them.
    roots = [state_key(d) for d in runtime.session.working_dirs]
    inside = [path for path in left if any(Path(path).is_relative_to(root) for root in roots)]
    recent = inside[-plan.REATTACH_FILES :]
    uses = [
        ToolUse(id=f"toolu_compact_{time.monotonic_ns()}_{n}", name="Read", input={"file_path": path})
        for n, path in enumerate(reversed(recent))
    ]
    attached: list[tuple[ToolUse, ToolResult]] = []
    if uses:
        for use, result in zip(uses, await runtime.orchestrator.run_turn(uses, token), strict=True):
            path = str(use.input["file_path"])
            cost = estimate_tokens(result.model_dump_json())
            if result.is_error or cost > budget:
                file_state.forget(path)  # not in the context after all
                continue
            budget -= cost
            attached.append((use, result))
    reattached = {str(use.input["file_path"]) for use, _ in attached}
    return attached, [path for path in left if path not in reattached]


async def compact(host: ChatHost, focus: str | None, trigger: Trigger, token: CancelToken) -> Compaction:
    window = host.provider.info.context_window
    # Asked for, it summarises all it can; automatic, it keeps a share of the window verbatim.
    keep = 0 if trigger == "manual" else int(plan.KEEP_RECENT_SHARE * window)
    cut = plan.cut_index(host.messages, keep)
    if cut is None:
        raise CompactionError("There is nothing before the latest exchange to summarise.")
    older, tail = host.messages[:cut], host.messages[cut:]
    # PreCompact hooks may add instructions for the summary (beside the person's focus).
    hook_notes = await host.hooks.pre_compact("manual" if trigger == "manual" else "auto")
    focus = "\n".join(part for part in (focus, *hook_notes) if part) or None
    todos = "\n".join(f"- [{t.status}] {t.content}" for t in host.runtime.session.deps.get(TODOS).items)
    summary, usage = await summarise(host.provider, older, window, todos, focus, token)
    head = plan.summary_message(summary, len(older), plan.latest_prompt(older))
    # SessionStart(source="compact") hooks see the new start of the conversation; what they add goes with it.
    started = await host.hooks.session_start("compact")
    if started:
        head = ChatMessage(role="user", content=[*head.content, TextBlock(text=context_note(started))])
    # Re-attached files may take at most half of what the summary freed: a compaction always shrinks.
    freed = sum(plan.message_tokens(m) for m in older) - plan.message_tokens(head)
    budget = min(int(plan.REATTACH_SHARE * window), freed // 2)
    attached, forgotten = await reattach_recent_files(host.runtime, tail, budget, token)
    messages = plan.compacted(head, attached, tail)
    return Compaction(
        messages=messages,
        head=messages[: len(messages) - len(tail)],
        kept=len(tail),
        summarised=len(older),
        summary=summary,
        reattached=[str(use.input["file_path"]) for use, _ in attached],
        forgotten=forgotten,
        summary_usage=usage,
    )


# --- what the loop calls --------------------------------------------------------------------------------------
class ContextKeeper:
    """The loop's side of the window: when to compact, compacting or clearing, and what it all costs."""

    def __init__(self, host: ChatHost) -> None:
        self.host = host
        self._own_usage = Usage()
        self._own_cost: float | None = 0.0
        self._elsewhere: dict[str, UsageReport] = {}  # each subagent's latest reading, by its task id
        self._last: UsageReport | None = None  # this meter's latest reading
        self._failed_at: int | None = None  # conversation length when an automatic compaction last failed

    def due(self, request: ModelRequest) -> bool:
        """Near the window. After a failed attempt, not again until the conversation has grown."""
        if self._failed_at is not None and len(self.host.messages) <= self._failed_at:
            return False
        return plan.should_compact(request_tokens(request), self.host.provider.info.context_window)

    async def compact(self, trigger: Trigger, token: CancelToken, focus: str | None = None) -> bool:
        host = self.host
        before = sum(plan.message_tokens(m) for m in host.messages)
        started = time.perf_counter()
        try:
            done = await compact(host, focus, trigger, token)
        except CompactionError as exc:
            self._failed_at = len(host.messages)
            fallback = " Older tool outputs are cleared instead when room is needed." if trigger != "manual" else ""
            host.emit(CompactionFailed(trigger=trigger, message=f"Compaction failed. {exc.message}{fallback}"))
            return False
        self._failed_at = None
        host.messages = done.messages
        host.transcript.append(
            CompactedEntry(
                head=done.head,
                kept_messages=done.kept,
                trigger=trigger,
                forgotten_files=done.forgotten,
                reattached_files=done.reattached,
            )
        )
        self._count(done.summary_usage)
        after = sum(plan.message_tokens(m) for m in host.messages)
        first_kept = done.messages[len(done.head)]
        host.emit(
            Compacted(
                trigger=trigger,
                summarised=done.summarised,
                kept=done.kept,
                tokens_before=before,
                tokens_after=after,
                seconds=round(time.perf_counter() - started, 3),
                summary=done.summary,
                reattached=done.reattached,
                forgotten=done.forgotten,
                summary_usage=done.summary_usage,
                kept_from_tool_use_id=next((use.id for use in first_kept.tool_uses()), None),
            )
        )
        return True

    def clear_old_outputs(self) -> bool:
        """Clear older tool outputs, keeping each whole in the output store (False: nothing worth clearing)."""
        host = self.host
        ids = results_to_clear(host.messages)
        if not ids:
            return False
        refs = _store_results(host.runtime, find_results(host.messages, ids))
        host.messages = clear_results(host.messages, {i: cleared_note(refs.get(i)) for i in ids})
        host.transcript.append(ClearedEntry(tool_use_ids=ids, refs=refs))
        count = f"{len(ids)} earlier tool output{'s' if len(ids) != 1 else ''}"
        kept = "kept in the output store for the model to read back" if refs else "the model can run them again"
        host.emit(
            ContextCleared(
                cleared=len(ids),
                message=f"The conversation no longer fit the model's context window, so {count} were cleared "
                f"({kept}) and the request was sent again.",
            )
        )
        return True

    def report(self, usage: Usage, request: ModelRequest) -> UsageReport:
        """One request's usage, the context it filled and its cost, with the session's totals so far.

        A server that reported no usage (some OpenAI-compatible ones never do) did not use nothing: the context is
        the request's estimate, said to be one, and the cost is unknown from then on rather than counted as zero."""
        host = self.host
        reported = usage != Usage()
        self._count(usage)
        if not reported:
            self._own_cost = None
        self._last = UsageReport(
            usage=usage,
            context_tokens=context_tokens(usage, host.provider.name) if reported else request_tokens(request),
            context_estimated=not reported,
            context_window=host.provider.info.context_window,
            cost_usd=cost_usd(usage, host.provider.name, host.provider.info.prices) if reported else None,
            total_usage=self.total_usage,
            total_cost_usd=self.total_cost,
        )
        return self._last

    def count_elsewhere(self, source: str, reading: UsageReport) -> UsageReport | None:
        """Another conversation's meter (a subagent's; `source` tells them apart) counts into this one: its latest
        `reading` (its own requests, priced for its model, and its children's) replaces what it reported before.
        Returns this meter's new reading: this conversation's last request and context with the new totals (None
        before its first request, whose report will carry them)."""
        self._elsewhere[source] = reading
        if self._last is None:
            return None
        self._last = self._last.model_copy(update={"total_usage": self.total_usage, "total_cost_usd": self.total_cost})
        return self._last

    @property
    def total_usage(self) -> Usage:
        """This session's requests (summaries included) and its subagents'."""
        total = self._own_usage
        for reading in self._elsewhere.values():
            total = total.add(reading.total_usage)
        return total

    @property
    def total_cost(self) -> float | None:
        """What `total_usage` cost; None when the price of any model it used is unknown."""
        costs = [self._own_cost, *(reading.total_cost_usd for reading in self._elsewhere.values())]
        known = [cost for cost in costs if cost is not None]
        return sum(known) if len(known) == len(costs) else None

    def _count(self, usage: Usage) -> None:
        self._own_usage = self._own_usage.add(usage)
        cost = cost_usd(usage, self.host.provider.name, self.host.provider.info.prices)
        self._own_cost = None if cost is None or self._own_cost is None else self._own_cost + cost


def _store_results(runtime: Runtime, results: list[ToolResult]) -> dict[str, str]:
    """Each result's whole output in the session's output store: tool_use id → reference. A result that cannot
    be stored is left out (its note then says to run the call again)."""
    refs: dict[str, str] = {}
    try:
        outputs = runtime.session.deps.get(OUTPUT_STORE)
    except OSError:
        log.exception("no output store for cleared results")
        return refs
    for result in results:
        try:
            refs[result.tool_use_id] = outputs.put_result(result.content, source=f"cleared {result.tool_use_id}").ref
        except OSError:
            log.exception("could not store the cleared output of %s", result.tool_use_id)
    return refs
