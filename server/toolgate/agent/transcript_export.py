"""A stored conversation for people: a readable Markdown document, a JSON document, and finding text in it.

Pure: it is given the full history (`LoadedTranscript.history`, summarised messages included) and the session's
description; reading and writing files is the caller's. The Markdown keeps every prompt and answer verbatim and
summarises each tool call in one line (the tool, what it was given, the first line of what it gave back), so a
long session reads as the conversation it was rather than as the outputs the model read. An Agent call's child run
(agent/subagent_record.py) is nested under its call: the child's calls the same way, a grandchild's under the child's
call, and the child's answer. Results reach the transcript redacted (core/runner.py); everything else an export
holds (prompts, answers, tool inputs, a child's lines, summaries, the title) is redacted as it is exported
(agent/export_redact.py), and the export says at its top how many values were taken out.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolgate.agent.conversation import ChatMessage
from toolgate.agent.events import StopReason
from toolgate.agent.export_redact import ExportRedactor, redaction_note
from toolgate.agent.subagent_record import SubagentCall, SubagentRun
from toolgate.agent.transcript import CompactionMark
from toolgate.core.messages import TextBlock, ToolResult, ToolUse
from toolgate.text.redact import redact

EXPORT_FORMAT_VERSION = 1
LINE_CHARS = 160
SNIPPET_BEFORE = 40
SNIPPET_AFTER = 80
# The inputs that say best what a call was about, in the order they are looked for (the panel's cards agree).
_SALIENT_INPUTS = ("command", "file_path", "path", "notebook_path", "pattern", "url", "query", "description")
# How a child run ended, after "The `explore` subagent" (the panel's Agent card says the same).
_RUN_ENDS: dict[StopReason | None, str] = {
    "end_turn": "answered",
    "interrupted": "was interrupted",
    "max_turns": "stopped at its request limit",
    "max_tokens": "was cut off at the token limit",
    "error": "stopped on an error",
    "prompt_blocked": "stopped: a hook blocked its task",
    None: "had not ended (it was interrupted, or still ran when this was exported)",
}


class ExportedSession(BaseModel):
    """What describes a session at the top of an export."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    workspace: str
    created: dt.datetime
    updated: dt.datetime


class ExportRedactions(BaseModel):
    """What was taken out of an export's texts as it was made."""

    model_config = ConfigDict(extra="forbid")

    count: int
    kinds: dict[str, int] = Field(description='How many values of each kind ("GitHub token", ...).')
    note: str = Field(description="The same sentence the Markdown export starts with.")


class SessionExport(BaseModel):
    """The JSON export: the session, every message (Anthropic shapes), where it was summarised, and what each Agent
    call's child agent did."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["toolgate-session"] = "toolgate-session"
    version: int = EXPORT_FORMAT_VERSION
    redacted: ExportRedactions | None = Field(
        default=None,
        description="Present only when secret values were taken out: each string holding one reads "
        "`[REDACTED <kind>]` in its place. An export without secrets has no such key.",
    )
    session: ExportedSession
    messages: list[ChatMessage]
    compactions: list[CompactionMark]
    subagents: dict[str, SubagentRun] = Field(
        default_factory=dict,
        description="By Agent tool_use id: its child agent's calls (a grandchild's inside the "
        "call that started it), how it ended and its answer.",
    )


@dataclass(frozen=True, slots=True)
class _Redacted:
    """What an export is rendered from: the stored session with secrets taken out, and what was taken out."""

    session: ExportedSession
    history: list[ChatMessage]
    compactions: list[CompactionMark]
    subagents: dict[str, SubagentRun]
    found: list[str]


def export_json(
    session: ExportedSession,
    history: Sequence[ChatMessage],
    compactions: Sequence[CompactionMark],
    subagents: Mapping[str, SubagentRun] | None = None,
    known_secrets: Collection[str] = (),
) -> str:
    """`known_secrets`: values to take out wherever they appear (the environment's secrets), besides the shapes."""
    done = _redacted(session, history, compactions, subagents, known_secrets)
    note = redaction_note(done.found)
    redactions = None
    if note is not None:
        redactions = ExportRedactions(count=len(done.found), kinds=dict(Counter(done.found)), note=note)
    document = SessionExport(
        redacted=redactions,
        session=done.session,
        messages=done.history,
        compactions=done.compactions,
        subagents=done.subagents,
    )
    # Without redactions the document is written as it was before the key existed, byte for byte.
    return document.model_dump_json(indent=2, exclude={"redacted"} if redactions is None else None) + "\n"


def export_markdown(
    session: ExportedSession,
    history: Sequence[ChatMessage],
    compactions: Sequence[CompactionMark],
    subagents: Mapping[str, SubagentRun] | None = None,
    known_secrets: Collection[str] = (),
) -> str:
    """`known_secrets`: as for `export_json`."""
    done = _redacted(session, history, compactions, subagents, known_secrets)
    session, history, compactions, runs = done.session, done.history, done.compactions, done.subagents
    note = redaction_note(done.found)
    results = {r.tool_use_id: r for message in history for r in message.tool_results()}
    notes: dict[int, list[CompactionMark]] = {}
    for mark in compactions:
        notes.setdefault(mark.after_messages, []).append(mark)
    prompts = sum(1 for message in history if _is_prompt(message))
    lines = [
        f"# {_one_line(session.title) or 'Untitled session'}",
        "",
        f"- Workspace: {_code(session.workspace)}",
        f"- Started: {_when(session.created)} · last used: {_when(session.updated)}",
        f"- Prompts: {prompts}",
        *([] if note is None else [f"- {note}"]),
        "",
    ]
    speaker: str | None = None
    for index, message in enumerate(history):
        for mark in notes.get(index, []):
            lines.extend(_compaction_note(mark))
            speaker = None
        if message.role == "user":
            text = message.text().strip()
            if text:
                lines.extend(["## You", "", text, ""])
                speaker = "user"
            continue
        if speaker != "assistant":
            lines.extend(["## toolgate", ""])
            speaker = "assistant"
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                lines.extend([block.text.strip(), ""])
            elif isinstance(block, ToolUse):
                result = results.get(block.id)
                lines.extend([_call_line(block.name, _salient_input(block.input), _result_line(result)), ""])
                run = runs.get(block.id)
                if run is not None:
                    lines.extend(_run_lines(run, indent="  "))
    for mark in notes.get(len(history), []):
        lines.extend(_compaction_note(mark))
    return "\n".join(lines).rstrip() + "\n"


def find_text(history: Sequence[ChatMessage], query: str) -> str | None:
    """A snippet around the first place a prompt or an answer holds `query` (case ignored); None: nowhere."""
    wanted = query.lower()
    for message in history:
        for block in message.content:
            if not isinstance(block, TextBlock):
                continue
            lowered = block.text.lower()
            at = lowered.find(wanted)
            if at < 0:
                continue
            # Lower-casing may change a text's length (rarely): then the snippet is cut from the lowered text.
            source = block.text if len(lowered) == len(block.text) else lowered
            start, end = max(0, at - SNIPPET_BEFORE), at + len(wanted) + SNIPPET_AFTER
            snippet = " ".join(source[start:end].split())
            return ("…" if start > 0 else "") + snippet + ("…" if end < len(source) else "")
    return None


def export_file_name(title: str, extension: str, known_secrets: Collection[str] = ()) -> str:
    """A file name from the title (a first prompt, which may hold a pasted token: it is redacted first)."""
    shown = redact(title, known_secrets).text
    slug = re.sub(r"[^A-Za-z0-9]+", "-", shown).strip("-").lower()[:60].rstrip("-")
    return f"{slug or 'toolgate-session'}.{extension}"


def _redacted(
    session: ExportedSession,
    history: Sequence[ChatMessage],
    compactions: Sequence[CompactionMark],
    subagents: Mapping[str, SubagentRun] | None,
    known_secrets: Collection[str],
) -> _Redacted:
    """Every text an export is made from, redacted once (agent/export_redact.py)."""
    redactor = ExportRedactor(known_secrets)
    title, workspace = redactor.text(session.title), redactor.text(session.workspace)
    if title is not session.title or workspace is not session.workspace:
        session = session.model_copy(update={"title": title, "workspace": workspace})
    return _Redacted(
        session=session,
        history=[redactor.message(message) for message in history],
        compactions=[redactor.compaction(mark) for mark in compactions],
        subagents={task_id: redactor.run(run) for task_id, run in (subagents or {}).items()},
        found=redactor.found,
    )


def _is_prompt(message: ChatMessage) -> bool:
    return message.role == "user" and any(isinstance(b, TextBlock) and b.text.strip() for b in message.content)


def _call_line(name: str, subject: str, result: tuple[str, bool] | None) -> str:
    """`result`: its first line, and whether the call failed; None: no result was recorded."""
    call = f"- **{name}**" + (f" {_code(subject)}" if subject else "")
    if result is None:
        return f"{call} — no result was recorded"
    first, failed = result
    return f"{call} — {'failed: ' if failed else ''}{first}" if first else call


def _result_line(result: ToolResult | None) -> tuple[str, bool] | None:
    return None if result is None else (_first_line(result.text()), result.is_error)


def _run_lines(run: SubagentRun, indent: str) -> list[str]:
    """A child's run, nested under its Agent call's line: what it is, its calls, its answer (a quote)."""
    count = f"{len(run.calls)} call{'' if len(run.calls) == 1 else 's'}"
    lines = [f"{indent}The {_code(run.agent_type)} subagent {_RUN_ENDS[run.stop_reason]} ({count}).", ""]
    for call in run.calls:
        lines.extend([f"{indent}{_child_call_line(call)}", ""])
        if call.subagent is not None:
            lines.extend(_run_lines(call.subagent, indent + "  "))
    if run.answer.strip():
        said = "Its answer:" if run.stop_reason == "end_turn" else "Its last reply:"
        quoted = [f"{indent}> {line}" if line else f"{indent}>" for line in run.answer.strip().splitlines()]
        lines.extend([f"{indent}{said}", "", *quoted, ""])
    return lines


def _child_call_line(call: SubagentCall) -> str:
    # The record keeps the card's lines (a summary of the input, the result's first line), not the call's input.
    result = None if call.result_summary is None else (_one_line(call.result_summary), call.is_error)
    return _call_line(call.name, _one_line(call.summary), result)


def _salient_input(value: dict[str, Any]) -> str:
    for key in _SALIENT_INPUTS:
        found = value.get(key)
        if isinstance(found, str) and found.strip():
            return _one_line(found)
    return _one_line(json.dumps(value, ensure_ascii=False)) if value else ""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("<tool_error", "</tool_error")):
            return _one_line(line)
    return ""


def _compaction_note(mark: CompactionMark) -> list[str]:
    how = {
        "auto": "near the context window",
        "overflow": "after the model refused a long request",
        "manual": "on request",
    }
    return [
        f"> The {mark.summarised_messages} messages above were summarised {how[mark.trigger]} "
        f"({_when(mark.at)}); the model went on from this summary:",
        ">",
        *[f"> {line}" if line else ">" for line in mark.summary.strip().splitlines()],
        "",
    ]


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def _code(text: str) -> str:
    """Inline code that holds any text: its fence is one backtick longer than the longest run inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def _when(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
