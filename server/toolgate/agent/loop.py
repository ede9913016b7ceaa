"""The agent loop: an AgentChat answers one user message at a time, calling tools until the model stops.

    send(text): system prompt + conversation + sorted tool definitions → stream the reply → run its
    tool_uses through the runtime's orchestrator → one user message with every tool_result, in tool_use
    order → again, until a reply asks for no tool (decided from the content, not `stop_reason` alone).

Whatever happens — an interrupt while streaming or while a tool runs, an API error, a bug, the caller
cancelling `send` — the conversation is left so the next request is valid: every tool_use has its
tool_result, and an interrupt is written into the conversation so the model knows about it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Literal

from toolgate.agent.chat_hooks import ChatHooks, context_note
from toolgate.agent.compaction import ContextKeeper, request_tokens
from toolgate.agent.conversation import ChatMessage, merge_into, stopped_result, unanswered_tool_uses, user_text
from toolgate.agent.events import (
    ChatEvent,
    ErrorEvent,
    MessageAdded,
    RequestStarted,
    StopReason,
    TodoUpdate,
    ToolCallProgress,
    TurnEnd,
    Usage,
)
from toolgate.agent.providers.base import ModelError, ModelRequest, Provider
from toolgate.agent.reply_stream import ReplyStream
from toolgate.agent.retry import RetryPolicy
from toolgate.agent.system_prompt import build_system_prompt, current_environment
from toolgate.agent.tool_calls import run_tool_calls
from toolgate.agent.transcript import ErrorEntry, InterruptEntry, MessageEntry, TodosEntry, Transcript
from toolgate.core.messages import TextBlock, ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.todo_items import TodoItem
from toolgate.core.tool import DescribeContext, ToolDefinition
from toolgate.core.tool_session import ProgressEvent
from toolgate.mcp.session import MCP_SERVERS
from toolgate.runtime import Runtime
from toolgate.tools.todo_write import TODOS

log = logging.getLogger("toolgate.agent")

DEFAULT_MAX_TURNS = 100

INTERRUPT_NOTE = (
    "[The user interrupted at this point. Any call above whose result says it was interrupted or not run did "
    "not finish. Stop here and wait for the user's next message.]"
)

ChatListener = Callable[[ChatEvent], None]
AfterSend = Callable[[str, StopReason], None]


class ChatBusy(RuntimeError):
    """`send` was called while an earlier message is still being answered."""


class AgentChat:
    """One conversation with a model, driving one tool runtime. Not thread-safe: use it from one event loop.

    `aclose()` closes the runtime (its output store and background tasks) and the provider's client.
    """

    def __init__(
        self,
        runtime: Runtime,
        provider: Provider,
        *,
        system_prompt: str | None = None,
        messages: Sequence[ChatMessage] = (),
        transcript: Transcript | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_tokens: int | None = None,
        retry: RetryPolicy | None = None,
        after_send: AfterSend | None = None,
        subagent: bool = False,
    ) -> None:
        self.runtime = runtime
        # A subagent's chat (agent/subagents.py) is part of its parent's session: no SessionStart or
        # UserPromptSubmit of its own, and its end is SubagentStop rather than Stop.
        self._subagent = subagent
        self.provider = provider
        workspace = runtime.session.workspace
        self.system_prompt = (
            system_prompt
            if system_prompt is not None
            else build_system_prompt(current_environment(workspace), runtime.registry.names, workspace)
        )
        self.messages: list[ChatMessage] = []
        for message in messages:
            merge_into(self.messages, message)
        self.transcript = transcript or Transcript(None)
        self.max_turns = max_turns
        self._max_tokens_override = max_tokens
        self.max_tokens = max_tokens if max_tokens is not None else provider.max_tokens
        self._next_provider: Provider | None = None
        self.retry = retry or RetryPolicy()
        self._after_send = after_send
        self._listeners: list[ChatListener] = []
        self._cancel: CancelToken | None = None
        self._replies = ReplyStream(self.emit)
        self._definitions: tuple[DescribeContext, list[ToolDefinition]] | None = None
        self._running_calls: set[str] = set()
        self._totals: _Totals | None = None  # the turn being answered
        self._unsubscribe_todos = runtime.session.deps.get(TODOS).subscribe(self._on_todos)
        self._stop_progress = runtime.session.progress.add(self._on_progress)
        # Every answer a person gives is kept, so a reopened session draws its cards as they were answered.
        self._stop_decisions = runtime.session.decisions.listen(self.transcript.record_decision)
        # The session's own hook events (agent/chat_hooks.py); SessionStart fires before the first prompt.
        self.hooks = ChatHooks(runtime, self.emit)
        self._resumed = bool(self.messages)
        self._session_started = False
        self.context = ContextKeeper(self)

    # --- the public surface ------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.runtime.session.id

    @property
    def busy(self) -> bool:
        return self._cancel is not None

    @property
    def todos(self) -> list[TodoItem]:
        return list(self.runtime.session.deps.get(TODOS).items)

    def subscribe(self, listener: ChatListener) -> Callable[[], None]:
        """Hear every event. Returns a function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def interrupt(self) -> bool:
        """Stop the message being answered (streaming, or tools running). False when nothing is running."""
        if self._cancel is None or self._cancel.cancelled:
            return False
        self._cancel.cancel()
        return True

    def replace_provider(self, provider: Provider) -> None:
        """Talk to another model from the next message on (a message being answered finishes with the old one)."""
        self._next_provider = provider

    async def send(self, text: str, attached: Sequence[TextBlock] = ()) -> StopReason:
        """Answer one user message and what the person attached; returns when the model asks for no more tools."""
        if self._cancel is not None:
            raise ChatBusy("A message is still being answered; interrupt it or wait for it to finish.")
        if not text.strip():
            raise ValueError("The message is empty; the model APIs refuse empty messages.")
        if self._next_provider is not None:
            old, self.provider, self._next_provider = self.provider, self._next_provider, None
            if self._max_tokens_override is None:
                self.max_tokens = self.provider.max_tokens
            await old.aclose()
        token = CancelToken()
        self._cancel = token
        totals = self._totals = _Totals()
        stop: StopReason = "error"
        try:
            await self._start_mcp_servers()
            context = await self._hooks_before_prompt(text)
            if context is None:
                stop = "prompt_blocked"  # the model never saw it: nothing joins the conversation
            else:
                self._add(_prompt_message(await self._begin_turn(text), context, attached))
                stop = await self._finish_turn(await self._run(token, totals), token, totals)
        finally:
            self._cancel = None
            self._totals = None
            # Whatever ended the turn (a bug, the caller cancelling us), no tool_use is left unanswered.
            dangling = unanswered_tool_uses(self.messages)
            if dangling:
                self._add(ChatMessage(role="user", content=[stopped_result(u.id) for u in dangling]))
                self._record_interrupt("tools")
                stop = "interrupted"
            self.emit(TurnEnd(stop_reason=stop, requests=totals.requests, usage=totals.usage))
        if self._after_send is not None and stop != "prompt_blocked":
            self._after_send(text, stop)
        return stop

    # --- hook events of the turn (agent/chat_hooks.py) -----------------------------------------------------
    async def _hooks_before_prompt(self, text: str) -> list[str] | None:
        """SessionStart (once, before the first prompt), then UserPromptSubmit: the context they add for the
        model, or None when a hook blocked the prompt (a `hook` event says which, and why)."""
        context: list[str] = []
        if self._subagent:
            return context
        if not self._session_started:
            self._session_started = True
            context += await self.hooks.session_start("resume" if self._resumed else "new")
        verdict = await self.hooks.prompt_submitted(text)
        return None if verdict.blocked is not None else [*context, *verdict.context]

    async def _finish_turn(self, stop: StopReason, token: CancelToken, totals: _Totals) -> StopReason:
        """The turn's last changes are checkpointed (before anyone hears it ended); then a reply that asks for no
        tool ends the turn unless a Stop hook asks the model to go on (bounded). The checkpoint comes first so
        that what Stop hooks change is theirs, not the model's."""
        continuations = 0
        while True:
            if self.runtime.checkpoints is not None:
                await self.runtime.checkpoints.end_turn()
            if stop != "end_turn" or token.cancelled:
                return stop
            note = await self.hooks.stop(stop, continuations, subagent=self._subagent)
            if note is None:
                return stop
            continuations += 1
            self._add(user_text(note))
            stop = await self._run(token, totals)

    def context_estimate(self) -> int:
        """The estimated size in tokens of the next request (what the compaction threshold is checked against)."""
        return request_tokens(self._build_request())

    async def compact(self, focus: str | None = None) -> bool:
        """Summarise the older part of the conversation now (`/compact [focus]`, `chat --compact`). Between
        messages only. False when it could not be done (a `compaction_failed` event says why)."""
        if self._cancel is not None:
            raise ChatBusy("A message is still being answered; compact once it has finished.")
        self._cancel = token = CancelToken()
        try:
            return await self.context.compact("manual", token, focus)
        finally:
            self._cancel = None

    async def _start_mcp_servers(self) -> None:
        """The session's MCP servers start with its first turn, before the first request, so that the model
        sees their tools (toolgate.mcp.session); later turns find them started."""
        servers = self.runtime.session.deps.get(MCP_SERVERS)
        if servers is not None:
            await servers.ensure_started()

    async def _begin_turn(self, text: str) -> str:
        """A user message starts a turn: its checkpoint first. Files the user restored since the last message
        are announced with this one, so the model does not trust what it read before."""
        checkpoints = self.runtime.checkpoints
        if checkpoints is None:
            return text
        warning = await checkpoints.begin_turn()
        if warning is not None:
            log.warning("%s", warning)
        notice = checkpoints.take_restore_notice()
        return f"[{notice}]\n\n{text}" if notice else text

    def add_usage(self, usage: Usage) -> None:
        """Count usage spent for this turn elsewhere (a subagent's requests) into the turn's."""
        if self._totals is not None:
            self._totals.usage = self._totals.usage.add(usage)

    def publish(self, event: ChatEvent) -> None:
        """Tell this chat's listeners about an event of its turn that the loop did not produce (a subagent's)."""
        self.emit(event)

    def release_listeners(self) -> None:
        """Stop hearing the session (todos, progress, decisions); for a chat whose runtime lives on (a subagent)."""
        self._unsubscribe_todos()
        self._stop_progress()
        self._stop_decisions()

    async def aclose(self, reason: str = "exit") -> None:
        """End the session. Interrupts a running `send`; await that `send` before the runtime's tools go away.
        SessionEnd hooks (with `reason`) run first, while the session's sandbox is still there."""
        self.interrupt()
        self.release_listeners()
        self.transcript.close()
        try:
            if self._session_started:
                self._session_started = False  # once, however often it is closed
                await self.hooks.session_end(reason)
            await self.provider.aclose()
            if self._next_provider is not None:
                await self._next_provider.aclose()
        finally:
            await self.runtime.aclose()

    # --- the loop ----------------------------------------------------------------------------------------
    async def _run(self, token: CancelToken, totals: _Totals) -> StopReason:
        while True:
            if token.cancelled:
                self._record_interrupt("waiting")
                return "interrupted"
            if totals.requests >= self.max_turns:
                return "max_turns"
            totals.requests += 1
            self.emit(RequestStarted(request=totals.requests))
            request = self._build_request()
            if self.context.due(request) and await self.context.compact("auto", token):
                request = self._build_request()
            try:
                reply = await self._replies.request(self.provider, self.retry, request, token)
            except ModelError as exc:
                if exc.kind == "context_too_long" and await self._make_room(totals, token):
                    continue
                self.transcript.append(ErrorEntry(kind=exc.kind, message=exc.message))
                self.emit(ErrorEvent(kind=exc.kind, message=exc.message))
                return "error"
            if reply is None:  # interrupted while streaming: keep what the user already saw
                partial = "".join(self._replies.streamed)
                if partial.strip():
                    self._add(ChatMessage(role="assistant", content=[TextBlock(text=partial)]))
                self._record_interrupt("streaming")
                return "interrupted"
            totals.usage = totals.usage.add(reply.usage)
            totals.overflow_compacted = False
            self.emit(self.context.report(reply.usage, request))
            if reply.content:
                self._add(ChatMessage(role="assistant", content=list(reply.content)))
            uses = [b for b in reply.content if isinstance(b, ToolUse)]
            if not uses:
                return "max_tokens" if reply.stop_reason == "max_tokens" else "end_turn"
            results = await run_tool_calls(self.runtime, uses, reply.malformed, token, self.emit, self._running_calls)
            self._add(ChatMessage(role="user", content=list(results)))
            if token.cancelled:
                self._record_interrupt("tools")
                return "interrupted"

    def _build_request(self) -> ModelRequest:
        return ModelRequest(
            system=self.system_prompt,
            tools=self._tool_definitions(),
            messages=list(self.messages),
            max_tokens=self.max_tokens,
        )

    def _tool_definitions(self) -> list[ToolDefinition]:
        """The sorted definitions, rebuilt only when what they depend on changes (tools, mode, workspace).

        Descriptions are computed from the describe-context alone, so the same context gives the same bytes
        (the prompt-cache prefix), and the JSON Schemas are not regenerated for every request.
        """
        ctx = self.runtime.runner.describe_context()
        if self._definitions is None or self._definitions[0] != ctx:
            self._definitions = (ctx, self.runtime.registry.definitions(ctx))
        return self._definitions[1]

    # --- bookkeeping -------------------------------------------------------------------------------------
    def _add(self, message: ChatMessage) -> None:
        merge_into(self.messages, message)
        self.transcript.append(MessageEntry(message=message))
        self.emit(MessageAdded(message=message))

    async def _make_room(self, totals: _Totals, token: CancelToken) -> bool:
        """The request did not fit: compact (once per request), else clear older tool outputs. False when
        nothing is left to do."""
        if not totals.overflow_compacted:
            totals.overflow_compacted = True
            if await self.context.compact("overflow", token):
                return True
        return self.context.clear_old_outputs()

    def _record_interrupt(self, during: Literal["streaming", "tools", "waiting"]) -> None:
        self._add(user_text(INTERRUPT_NOTE))
        self.transcript.append(InterruptEntry(during=during))

    def _on_progress(self, event: ProgressEvent) -> bool:
        """A call of this chat reports as a chat event, and no one else reports it; anything else (a direct
        tools/run on the same session) goes on to the session's other listeners."""
        if event.tool_use_id not in self._running_calls:
            return False
        self.emit(ToolCallProgress(tool_use_id=event.tool_use_id, kind=event.kind, text=event.text))
        return True

    def _on_todos(self, todos: list[TodoItem]) -> None:
        self.transcript.append(TodosEntry(todos=todos))
        self.emit(TodoUpdate(todos=todos))

    def emit(self, event: ChatEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a broken listener must not break the conversation
                log.exception("a chat event listener raised")


def _prompt_message(text: str, context: list[str], attached: Sequence[TextBlock]) -> ChatMessage:
    """The prompt, then what the person attached and what hooks added, each its own block (the prompt stays the
    person's)."""
    if not context and not attached:
        return user_text(text)
    notes = [TextBlock(text=context_note(context))] if context else []
    return ChatMessage(role="user", content=[TextBlock(text=text), *attached, *notes])


class _Totals:
    def __init__(self) -> None:
        self.requests = 0
        self.usage = Usage()
        self.overflow_compacted = False  # this request already compacted after a "prompt too long" error
