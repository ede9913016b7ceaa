"""An AgentChat over a stored session: start a new one, or resume one (repairing what a crash left).

A session's files are laid out by `toolgate.session_files`; its runtime's output store lives in the
session directory, and closing the AgentChat closes the runtime (output store, background tasks).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError

from toolgate.agent.conversation import ChatMessage, merge_into
from toolgate.agent.events import StopReason
from toolgate.agent.loop import DEFAULT_MAX_TURNS, AgentChat
from toolgate.agent.prompt_index import is_prompt, read_count, write_count
from toolgate.agent.providers.base import Provider
from toolgate.agent.retry import RetryPolicy
from toolgate.agent.subagents import attach_subagents
from toolgate.agent.transcript import ENTRY, MessageEntry, RepairEntry, Transcript, load_transcript
from toolgate.core.messages import ToolResult
from toolgate.core.permission import Approver, PermissionMode
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.session_files import SessionFiles, SessionMeta
from toolgate.text.redact import redact
from toolgate.tools.todo_write import TODOS

TITLE_CHARS = 80


def title_of(prompt: str) -> str:
    """A session's title: its first prompt's first line, secrets taken out before it is cut (a token cut short
    matches no shape, and the title is shown in the history list and heads every export)."""
    lines = prompt.strip().splitlines()
    return redact(lines[0]).text[:TITLE_CHARS] if lines else ""


def open_chat(
    store: SessionFiles,
    provider: Provider,
    approver: Approver,
    *,
    workspace: Path | None = None,
    resume: str | None = None,
    runtime: RuntimeOptions | None = None,
    system_prompt: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tokens: int | None = None,
    retry: RetryPolicy | None = None,
) -> tuple[AgentChat, SessionMeta]:
    """A new session (in `workspace`), or the stored session `resume`, with its runtime, ready to `send`.

    `runtime.mode` is the mode of a new session, and replaces a resumed one's; `runtime.session_id` names a
    new session. The runtime's session id and directory are the stored session's."""
    options = runtime or RuntimeOptions()
    mode, session_id = options.mode, options.session_id
    if resume is not None:
        meta = store.load(resume)
        if mode is not None and mode != meta.mode:
            meta.mode = mode
            store.save(meta)
    else:
        if workspace is None:
            raise ValueError("a new session needs a workspace")
        meta = store.create(workspace, mode or PermissionMode.DEFAULT, session_id=session_id)
    options = replace(
        options, mode=meta.mode, session_id=meta.id, data_dir=store.session_dir(meta.id), checkpoints_root=store.root
    )
    chat = attach_chat(
        build_runtime(Path(meta.workspace), approver, options),
        provider,
        store,
        meta,
        system_prompt=system_prompt,
        max_turns=max_turns,
        max_tokens=max_tokens,
        retry=retry,
    )
    return chat, meta


def attach_chat(
    runtime: Runtime,
    provider: Provider,
    store: SessionFiles,
    meta: SessionMeta,
    *,
    system_prompt: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tokens: int | None = None,
    retry: RetryPolicy | None = None,
) -> AgentChat:
    """A AgentChat over a runtime the caller built (the sidecar does) for the stored session `meta`.

    Its transcript is read back and its tool_use/tool_result pairing repaired (a crash mid-turn leaves calls
    without results); the repair is written down, and the todo list restored. A new session simply has no
    transcript yet. After each `send`, meta.json gets the time (and a title from the first message).
    """
    path = store.transcript_path(meta.id)
    transcript = Transcript(path)
    loaded = load_transcript(path)
    if loaded.repair.changed:
        tail = loaded.messages[-1] if loaded.messages else None
        if tail is not None and _only_repaired_results(tail, loaded.repair.answered):
            transcript.append(MessageEntry(message=tail))  # later loads find the calls answered
        transcript.append(RepairEntry(answered=loaded.repair.answered, dropped=loaded.repair.dropped))
    if loaded.todos:
        runtime.session.deps.get(TODOS).replace(loaded.todos)  # before the chat listens: not a new change

    def after_send(text: str, stop: StopReason) -> None:
        store.touch(meta.id, title=title_of(text))

    chat = AgentChat(
        runtime,
        provider,
        system_prompt=system_prompt,
        messages=loaded.messages,
        transcript=transcript,
        max_turns=max_turns,
        max_tokens=max_tokens,
        retry=retry,
        after_send=after_send,
    )
    attach_subagents(chat)
    return chat


def reload_conversation(chat: AgentChat, path: Path) -> None:
    """The transcript at `path` was replaced (a conversation rewind): the chat goes on from it. Its appender
    reopens the new file, and the todo list is the one the conversation had then (told to listeners, and
    recorded, like any change of it). Only between turns."""
    chat.transcript.close()
    loaded = load_transcript(path)
    messages: list[ChatMessage] = []
    for message in loaded.messages:
        merge_into(messages, message)
    chat.messages = messages
    todos = chat.runtime.session.deps.get(TODOS)
    if list(todos.items) != loaded.todos:
        todos.replace(loaded.todos)


def prompt_offsets(transcript: bytes) -> list[int]:
    """Where each prompt (a user message with text, not only tool results) starts in a transcript's bytes,
    in order: the n-th is the n-th prompt the chat shows. Lines that cannot be read are passed over."""
    offsets: list[int] = []
    at = 0
    for line in transcript.splitlines(keepends=True):
        start, at = at, at + len(line)
        if b'"user"' not in line:
            continue  # most lines: no JSON to parse
        try:
            entry = ENTRY.validate_json(line)
        except ValidationError:
            continue
        if isinstance(entry, MessageEntry) and is_prompt(entry.message):
            offsets.append(start)
    return offsets


def prompt_count(path: Path) -> int:
    """How many prompts the transcript at `path` holds (0 when there is none). Counted again only when the file
    changed: a list of many sessions reads each one's prompt index (agent.prompt_index), and parses only the
    transcripts it does not describe (then writes it for them)."""
    try:
        stat = path.stat()
    except OSError:
        return 0
    return _prompt_count(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=1024)
def _prompt_count(path: Path, size: int, mtime_ns: int) -> int:
    indexed = read_count(path, size, mtime_ns)
    if indexed is not None:
        return indexed
    try:
        data = path.read_bytes()
        now = path.stat()
    except OSError:
        return 0
    count = len(prompt_offsets(data))
    if (len(data), now.st_size, now.st_mtime_ns) == (size, size, mtime_ns):  # what was counted is what was asked
        write_count(path, size, mtime_ns, count)
    return count


def _only_repaired_results(message: ChatMessage, answered: list[str]) -> bool:
    return (
        message.role == "user"
        and bool(message.content)
        and all(isinstance(b, ToolResult) and b.tool_use_id in answered for b in message.content)
    )
