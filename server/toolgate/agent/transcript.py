"""A session's transcript: JSON Lines, appended one entry at a time, never rewritten.

Each line is one entry: a message that joined the conversation, an interrupt, a todo-list change, a repair
made on resume, an API error, what a person decided about a call (an approval or a diff review, so a
reopened session shows the same answered cards it showed live), or what a child agent did (its Agent card: each
step as it is taken, then the whole run when it ends).
Loading replays the messages, skips (and reports) lines it cannot read — a crash can cut the last line short — and
repairs the tool_use/tool_result pairing so the conversation can be sent again. The file itself is only ever appended
to: no data is lost to a bad line.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from toolgate.agent.context_relief import clear_results, cleared_note
from toolgate.agent.conversation import ChatMessage, Repair, merge_into, repair
from toolgate.agent.events import ErrorKindName
from toolgate.agent.prompt_index import is_prompt, open_index, read_count, record_count
from toolgate.agent.subagent_record import RunStarted, SubagentProgress, SubagentRun, apply_step
from toolgate.core.decisions import ApprovalRecord, Decision, ReviewRecord
from toolgate.core.todo_items import TodoItem

log = logging.getLogger("toolgate.transcript")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    at: dt.datetime = Field(default_factory=_now)


class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: ChatMessage


class InterruptEntry(_Entry):
    type: Literal["interrupt"] = "interrupt"
    during: Literal["streaming", "tools", "waiting"]


class TodosEntry(_Entry):
    type: Literal["todos"] = "todos"
    todos: list[TodoItem]


class RepairEntry(_Entry):
    """Resuming found the pairing broken (a crash mid-turn) and fixed it as described."""

    type: Literal["repair"] = "repair"
    answered: list[str]  # tool_use ids that got a "session stopped" result
    dropped: list[str]  # tool_result ids that answered no tool_use


class ClearedEntry(_Entry):
    """The outputs of these calls were cleared to fit the context window (agent/context_relief.py)."""

    type: Literal["cleared"] = "cleared"
    tool_use_ids: list[str]
    refs: dict[str, str] = Field(default_factory=dict)  # tool_use id → output-store reference of the whole output


class CompactedEntry(_Entry):
    """From here on the conversation is `head` (the summary, re-attached files) followed by the last
    `kept_messages` messages before this entry (agent/compaction.py). The summarised messages stay above it."""

    type: Literal["compacted"] = "compacted"
    head: list[ChatMessage]
    kept_messages: int
    trigger: Literal["auto", "overflow", "manual"]
    forgotten_files: list[str] = Field(default_factory=list)
    reattached_files: list[str] = Field(default_factory=list)


class ErrorEntry(_Entry):
    type: Literal["error"] = "error"
    kind: ErrorKindName
    message: str


class DecisionEntry(_Entry):
    """How an approval or a diff review was answered (or that it was withdrawn)."""

    type: Literal["decision"] = "decision"
    decision: Decision


class SubagentEntry(_Entry):
    """What the child agent of an Agent call did, written when it ended (agent/subagent_record.py): the whole run,
    which replaces what its progress entries said."""

    type: Literal["subagent"] = "subagent"
    run: SubagentRun


class SubagentProgressEntry(_Entry):
    """One step of a child agent's run, written as it was taken (agent/subagent_record.py)."""

    type: Literal["subagent_progress"] = "subagent_progress"
    progress: SubagentProgress


Entry = Annotated[
    MessageEntry
    | InterruptEntry
    | TodosEntry
    | RepairEntry
    | ClearedEntry
    | CompactedEntry
    | ErrorEntry
    | DecisionEntry
    | SubagentEntry
    | SubagentProgressEntry,
    Field(discriminator="type"),
]
ENTRY: TypeAdapter[Entry] = TypeAdapter(Entry, config=ConfigDict(defer_build=True))
_KINDS = frozenset(kind.model_fields["type"].default for kind in get_args(get_args(Entry)[0]))


class Transcript:
    """The append side. `path` None keeps nothing (an in-memory session). Its prompt index (agent.prompt_index)
    is kept up to date while the prompt count is known."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fd: int | None = None
        self._prompts: int | None = None  # in the file as it was left (`_left`), when known
        self._left: tuple[int, int] | None = None  # the file's size and time after this writer's last append
        self._index_fd: int | None = None

    def append(self, entry: Entry) -> None:
        if self.path is None:
            return
        if self._fd is None:
            self._fd = self._open(self.path)
        found = os.fstat(self._fd)
        if (found.st_size, found.st_mtime_ns) != self._left:  # first append, or written by someone else since
            found = self._end_last_line(self.path, self._fd)
            known = 0 if found.st_size == 0 else read_count(self.path, found.st_size, found.st_mtime_ns)
            self._prompts = known
        # One write per line: a crash leaves at most the last line incomplete.
        os.write(self._fd, entry.model_dump_json().encode("utf-8") + b"\n")
        left = os.fstat(self._fd)
        self._left = (left.st_size, left.st_mtime_ns)
        if self._prompts is not None:
            self._prompts += isinstance(entry, MessageEntry) and is_prompt(entry.message)
            if self._index_fd is None:
                self._index_fd = open_index(self.path)
            if self._index_fd is not None:
                record_count(self._index_fd, left.st_size, left.st_mtime_ns, self._prompts)

    @staticmethod
    def _open(path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    @staticmethod
    def _end_last_line(path: Path, fd: int) -> os.stat_result:
        """A line cut short by a crash (or left open by another writer) must not swallow the next entry: end it
        first. Returns the file's state after."""
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    os.write(fd, b"\n")
        return os.fstat(fd)

    def record_decision(self, decision: ApprovalRecord | ReviewRecord) -> None:
        """For the session's Decisions: keeping the record must never break the call it is about."""
        try:
            self.append(DecisionEntry(decision=decision))
        except OSError:
            log.exception("%s: could not record the %s of %s", self.path, decision.kind, decision.tool_use_id)

    def record_subagent(self, run: SubagentRun) -> None:
        """For the Agent tool: keeping the record must never break the call it is about."""
        try:
            self.append(SubagentEntry(run=run))
        except OSError:
            log.exception("%s: could not record the subagent of %s", self.path, run.task_id)

    def record_subagent_progress(self, progress: SubagentProgress) -> None:
        """For the Agent tool, as its child goes: keeping the record must never break the child."""
        try:
            self.append(SubagentProgressEntry(progress=progress))
        except OSError:
            log.exception("%s: could not record a step of the subagent of %s", self.path, progress.path[0])

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._left = None  # the file may be replaced before it is opened again
        if self._index_fd is not None:
            os.close(self._index_fd)
            self._index_fd = None


class CompactionMark(BaseModel):
    """Where a compaction happened in the full history (`LoadedTranscript.history`), for the panel and exports."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    after_messages: int = Field(description="It happened after this many messages of the full history.")
    summarised_messages: int = Field(description="The first this many messages of the full history were summarised.")
    trigger: Literal["auto", "overflow", "manual"]
    summary: str = Field(description="What the model went on from: the summary message's text.")
    at: dt.datetime


@dataclass
class LoadedTranscript:
    messages: list[ChatMessage]  # merged and repaired: ready to send
    # Every message that joined the conversation, merged, outputs uncleared, summarised ones too: what a person
    # reads back. The compactions say which of them the model now sees only through a summary.
    history: list[ChatMessage] = field(default_factory=list)
    compactions: list[CompactionMark] = field(default_factory=list)
    todos: list[TodoItem] = field(default_factory=list)
    decisions: list[ApprovalRecord | ReviewRecord] = field(default_factory=list)  # in the order answered
    # By the parent's Agent tool_use id. A run that never ended (stop_reason None) was running when the transcript
    # was last written to: `subagent_record.as_interrupted` says so once nothing runs any more.
    subagents: dict[str, SubagentRun] = field(default_factory=dict)
    repair: Repair = field(default_factory=lambda: Repair(messages=[]))
    unreadable_lines: list[int] = field(default_factory=list)


def load_transcript(path: Path) -> LoadedTranscript:
    raw: list[ChatMessage] = []
    history: list[ChatMessage] = []
    compactions: list[CompactionMark] = []
    todos: list[TodoItem] = []
    decisions: list[ApprovalRecord | ReviewRecord] = []
    subagents: dict[str, SubagentRun] = {}
    cleared: dict[str, str] = {}  # tool_use id → the note that replaces its output
    unreadable: list[int] = []
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        lines = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = ENTRY.validate_json(line)
        except ValidationError:
            if _is_unknown_kind(line):
                continue  # written by a newer version: not ours to judge
            unreadable.append(number)
            continue
        if isinstance(entry, MessageEntry):
            raw.append(entry.message)
            merge_into(history, entry.message)
        elif isinstance(entry, TodosEntry):
            todos = entry.todos
        elif isinstance(entry, ClearedEntry):
            cleared.update({i: cleared_note(entry.refs.get(i)) for i in entry.tool_use_ids})
        elif isinstance(entry, CompactedEntry):
            raw = _after_compaction(raw, entry)
            compactions.append(_mark(history, entry))
        elif isinstance(entry, DecisionEntry):
            decisions.append(entry.decision)
        elif isinstance(entry, SubagentEntry):
            subagents[entry.run.task_id] = entry.run
        elif isinstance(entry, SubagentProgressEntry):
            _apply_progress(subagents, entry.progress)
    if cleared:  # a resumed session starts as small as the one that was saved
        raw = clear_results(raw, cleared)
    if unreadable:
        log.warning("%s: skipped unreadable lines %s", path, ", ".join(map(str, unreadable)))
    fixed = repair(raw)
    return LoadedTranscript(
        messages=fixed.messages,
        history=history,
        compactions=compactions,
        todos=todos,
        decisions=decisions,
        subagents=subagents,
        repair=fixed,
        unreadable_lines=unreadable,
    )


def _after_compaction(raw: list[ChatMessage], entry: CompactedEntry) -> list[ChatMessage]:
    merged: list[ChatMessage] = []
    for message in raw:
        merge_into(merged, message)
    return [*entry.head, *merged[len(merged) - entry.kept_messages :]]


def _mark(history: list[ChatMessage], entry: CompactedEntry) -> CompactionMark:
    return CompactionMark(
        after_messages=len(history),
        summarised_messages=max(0, len(history) - entry.kept_messages),
        trigger=entry.trigger,
        summary=entry.head[0].text() if entry.head else "",
        at=entry.at,
    )


def _apply_progress(runs: dict[str, SubagentRun], progress: SubagentProgress) -> None:
    task_id, *inner = progress.path
    step = progress.step
    if not inner and isinstance(step, RunStarted):
        runs[task_id] = SubagentRun(task_id=task_id, agent_type=step.agent_type, description=step.description)
    elif task_id in runs:
        apply_step(runs[task_id], inner, step)


def _is_unknown_kind(line: bytes) -> bool:
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] not in _KINDS
