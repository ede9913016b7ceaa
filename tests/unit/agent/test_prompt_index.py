"""The History's prompt counts come from each transcript's prompt index when it describes the transcript as it
is, and from parsing the transcript otherwise: whatever happened to the files (appends by this version, lines
written by an older one, damaged or cut-short lines, escaped text, CRLF, rewinds, a torn or stale index, a
second writer), the count is the one a full parse of the transcript gives."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.agent import stored_chat
from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.prompt_index import index_path, read_count
from toolgate.agent.stored_chat import prompt_count, prompt_offsets
from toolgate.agent.transcript import MessageEntry, TodosEntry, Transcript
from toolgate.checkpoints.conversation import replace_transcript
from toolgate.core.messages import TextBlock, ToolResult, ToolUse

PROMPT_LINE = b'{"type":"message","message":{"role":"user","content":[{"type":"text","text":"an old prompt"}]}}'
ESCAPED_LINE = json.dumps(
    {"type": "message", "message": {"role": "user", "content": [{"type": "t\u0065xt", "text": "caf\u00e9"}]}},
    ensure_ascii=True,
).encode()
RAW_LINES = {
    "older version's prompt": PROMPT_LINE + b"\n",  # no "at": it validates, and is a prompt
    "escaped prompt": ESCAPED_LINE.replace(b"e", b"\\u0065", 1) + b"\n",
    "CRLF prompt": PROMPT_LINE + b"\r\n",
    "cut short": PROMPT_LINE[:40] + b"\n",
    "not json": b"not json at all\n",
    "unknown kind": b'{"type":"from the future","message":{"role":"user"}}\n',
    "no final newline": PROMPT_LINE,
}


def _message(kind: str) -> MessageEntry | TodosEntry:
    if kind == "prompt":
        return MessageEntry(message=user_text("look at this"))
    if kind == "results":
        return MessageEntry(message=ChatMessage(role="user", content=[ToolResult(tool_use_id="t", content="out")]))
    if kind == "results as blocks":  # text inside a result is not a prompt
        result = ToolResult(tool_use_id="t", content=[TextBlock(text="out")])
        return MessageEntry(message=ChatMessage(role="user", content=[result]))
    if kind == "results and text":  # a prompt sent with the results it follows
        result = ToolResult(tool_use_id="t", content="out")
        return MessageEntry(message=ChatMessage(role="user", content=[result, TextBlock(text="and now")]))
    if kind == "assistant":
        use = ToolUse(id="t", name="Read", input={"file_path": "a"})
        return MessageEntry(message=ChatMessage(role="assistant", content=[TextBlock(text="reading"), use]))
    return TodosEntry(todos=[])


APPENDS = ["prompt", "results", "results as blocks", "results and text", "assistant", "todos"]
STEP = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(APPENDS)),
    st.tuples(st.just("raw"), st.sampled_from(sorted(RAW_LINES))),
    st.tuples(st.just("second writer"), st.sampled_from(APPENDS)),
    st.tuples(st.just("reopen"), st.just("")),
    st.tuples(st.just("rewind"), st.integers(min_value=0, max_value=20)),
    st.tuples(st.just("torn index"), st.sampled_from(["", "00000000000000000001 2 3 4\n", "garbage"])),
)


def _parsed(path: Path) -> int:
    return len(prompt_offsets(path.read_bytes())) if path.exists() else 0


def _counted(path: Path) -> int:
    stored_chat._prompt_count.cache_clear()  # as a new sidecar would: the files are all it has
    return prompt_count(path)


def _run(path: Path, steps: list[tuple[str, object]]) -> None:
    writer = Transcript(path)
    for action, arg in steps:
        if action == "append":
            writer.append(_message(str(arg)))
        elif action == "second writer":
            other = Transcript(path)
            other.append(_message(str(arg)))
            other.close()
        elif action == "raw":
            with open(path, "ab") as handle:
                handle.write(RAW_LINES[str(arg)])
        elif action == "reopen":
            writer.close()
            writer = Transcript(path)
        elif action == "rewind" and path.exists():
            lines = path.read_bytes().splitlines(keepends=True)
            writer.close()  # as a conversation rewind does, before the transcript is replaced
            replace_transcript(path, b"".join(lines[: int(str(arg)) % (len(lines) + 1)]))
        elif action == "torn index":
            index_path(path).write_text(str(arg))
        assert _counted(path) == _parsed(path), f"after {action} {arg!r}"
    writer.close()


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, min_size=1, max_size=14))
def test_the_count_is_always_the_full_parse_s(steps: list[tuple[str, object]]) -> None:
    with tempfile.TemporaryDirectory(prefix="toolgate-prompts-") as directory:
        _run(Path(directory) / "transcript.jsonl", steps)


def test_appends_keep_the_index_so_a_new_process_reads_no_transcript(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    writer = Transcript(path)
    for kind in [*APPENDS, "prompt", "results and text"]:
        writer.append(_message(kind))
    stat = path.stat()
    assert read_count(path, stat.st_size, stat.st_mtime_ns) == _parsed(path) == 4
    # The same size and time, other bytes: what answers now is the index alone (no listing reads the transcript).
    path.write_bytes(b"x" * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _counted(path) == 4 and _parsed(path) == 0


def test_a_transcript_the_index_does_not_describe_is_parsed_and_indexed(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(RAW_LINES["older version's prompt"] * 3 + RAW_LINES["cut short"])  # no index yet
    assert _counted(path) == 3
    stat = path.stat()
    assert read_count(path, stat.st_size, stat.st_mtime_ns) == 3  # the next process reads this instead
    writer = Transcript(path)  # and the writer, finding it, keeps it up to date
    writer.append(_message("prompt"))
    writer.close()
    stat = path.stat()
    assert read_count(path, stat.st_size, stat.st_mtime_ns) == 4 == _parsed(path)
