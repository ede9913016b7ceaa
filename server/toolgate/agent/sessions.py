"""Stored chat sessions: start one, resume one (repairing what a crash left), list and delete them.

A session's files are laid out by `toolgate.session_store`; its runtime's output store lives in the
session directory, and closing the ChatSession closes the runtime (output store, background tasks).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolgate.agent.conversation import ChatMessage
from toolgate.agent.events import StopReason
from toolgate.agent.loop import DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS, ChatSession
from toolgate.agent.providers.base import Provider
from toolgate.agent.retry import RetryPolicy
from toolgate.agent.transcript import MessageEntry, RepairEntry, Transcript, load_transcript
from toolgate.core.messages import ToolResult
from toolgate.core.permission import Approver, PermissionMode, PermissionPolicy
from toolgate.core.tool import AnyTool
from toolgate.runtime import build_runtime
from toolgate.session_store import SessionMeta, SessionStore
from toolgate.tools.todo_write import TODOS

TITLE_CHARS = 80


def open_chat(
    store: SessionStore,
    provider: Provider,
    approver: Approver,
    *,
    workspace: Path | None = None,
    resume: str | None = None,
    session_id: str | None = None,
    mode: PermissionMode | None = None,
    additional_dirs: Sequence[Path] = (),
    policy: PermissionPolicy | None = None,
    tools: Sequence[AnyTool] | None = None,
    system_prompt: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    retry: RetryPolicy | None = None,
) -> tuple[ChatSession, SessionMeta]:
    """A new session (in `workspace`), or the stored session `resume`, ready to `send`.

    Resuming reads the transcript, repairs the tool_use/tool_result pairing (a crash mid-turn leaves calls
    without results), writes the repair down, and restores the todo list.
    """
    messages: list[ChatMessage] = []
    todos = None
    if resume is not None:
        meta = store.load(resume)
        if mode is not None and mode != meta.mode:
            meta.mode = mode
            store.save(meta)
        transcript = Transcript(store.transcript_path(meta.id))
        loaded = load_transcript(store.transcript_path(meta.id))
        messages, todos = loaded.messages, loaded.todos
        if loaded.repair.changed:
            tail = messages[-1] if messages else None
            if tail is not None and _only_repaired_results(tail, loaded.repair.answered):
                transcript.append(MessageEntry(message=tail))  # later loads find it answered
            transcript.append(RepairEntry(answered=loaded.repair.answered, dropped=loaded.repair.dropped))
    else:
        if workspace is None:
            raise ValueError("a new session needs a workspace")
        meta = store.create(workspace, mode or PermissionMode.DEFAULT, session_id=session_id)
        transcript = Transcript(store.transcript_path(meta.id))

    runtime = build_runtime(
        Path(meta.workspace),
        approver,
        mode=meta.mode,
        additional_dirs=additional_dirs,
        policy=policy,
        tools=tools,
        session_id=meta.id,
        data_dir=store.session_dir(meta.id),
    )
    if todos:
        runtime.session.deps.get(TODOS).replace(todos)  # before the chat listens: not a new change

    def after_send(text: str, stop: StopReason) -> None:
        store.touch(meta, title=text.strip().splitlines()[0][:TITLE_CHARS] if text.strip() else None)

    chat = ChatSession(
        runtime,
        provider,
        system_prompt=system_prompt,
        messages=messages,
        transcript=transcript,
        max_turns=max_turns,
        max_tokens=max_tokens,
        retry=retry,
        after_send=after_send,
    )
    return chat, meta


def _only_repaired_results(message: ChatMessage, answered: list[str]) -> bool:
    return (
        message.role == "user"
        and bool(message.content)
        and all(isinstance(b, ToolResult) and b.tool_use_id in answered for b in message.content)
    )
