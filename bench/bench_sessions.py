"""The panel's session history over many stored sessions: the list with prompt counts, search, export.

100 sessions of 20 prompts each, every answer reading a 10 kB file (the tool results are most of a transcript's
bytes, as in real sessions). Each figure's baseline is the plain file work under it in the same run: reading
every transcript's bytes, or parsing one transcript.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.report import Figure, Report, median_ms, time_sync
from toolgate.agent import stored_chat
from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.prompt_index import index_path
from toolgate.agent.stored_chat import prompt_count
from toolgate.agent.transcript import MessageEntry, Transcript, load_transcript
from toolgate.core.messages import TextBlock, ToolResult, ToolUse
from toolgate.session_files import SessionFiles
from toolgate.sidecar.sessions_handlers import export_session, search_sessions

SESSIONS = 100
PROMPTS = 20
FILE_BYTES = 10_000


def _store(workdir: Path) -> SessionFiles:
    store = SessionFiles(workdir / "data")
    body = "".join(f"{n}\tdef step_{n}(value):  # one line of a large module\n" for n in range(FILE_BYTES // 50))
    for number in range(SESSIONS):
        meta = store.create(workdir, session_id=f"s{number:03d}")
        meta.title = f"Session {number} about the parser"
        store.save(meta)
        transcript = Transcript(store.transcript_path(meta.id))
        for turn in range(PROMPTS):
            use = ToolUse(id=f"t{turn}", name="Read", input={"file_path": f"module_{turn}.py"})
            for message in [
                user_text(f"Look at module {turn} of session {number}"),
                ChatMessage(role="assistant", content=[TextBlock(text="Reading it."), use]),
                ChatMessage(role="user", content=[ToolResult(tool_use_id=use.id, content=body)]),
                ChatMessage(role="assistant", content=[TextBlock(text=f"Module {turn} is fine.")]),
            ]:
                transcript.append(MessageEntry(message=message))
        transcript.close()
    return store


def _read_all(store: SessionFiles) -> int:
    return sum(len(store.transcript_path(meta.id).read_bytes()) for meta in store.list())


def run(report: Report, workdir: Path) -> None:
    store = _store(workdir)
    note = f"{SESSIONS} sessions × {PROMPTS} prompts, {FILE_BYTES // 1000} kB read per prompt"
    raw = median_ms(time_sync(lambda: _read_all(store), repeat=5, warmup=1))
    baseline = "reading every transcript's bytes"

    started = time.perf_counter()
    counts = [prompt_count(store.transcript_path(meta.id)) for meta in store.list()]
    first_list = (time.perf_counter() - started) * 1000
    assert counts == [PROMPTS] * SESSIONS
    report.add(Figure("sessions", "list with prompt counts, first time", first_list, "ms", baseline, raw, note))
    listed = median_ms(
        time_sync(lambda: [prompt_count(store.transcript_path(m.id)) for m in store.list()], repeat=10, warmup=1)
    )
    report.add(Figure("sessions", "list with prompt counts, unchanged files", listed, "ms", baseline, raw, note))

    for meta in store.list():  # transcripts written by an older version: no prompt index beside them
        index_path(store.transcript_path(meta.id)).unlink()
    stored_chat._prompt_count.cache_clear()  # and a sidecar that has not counted them yet
    started = time.perf_counter()
    assert [prompt_count(store.transcript_path(meta.id)) for meta in store.list()] == [PROMPTS] * SESSIONS
    unindexed = (time.perf_counter() - started) * 1000
    name = "list with prompt counts, first time after an upgrade"
    report.add(Figure("sessions", name, unindexed, "ms", baseline, raw, note + "; no index yet: parsed, then indexed"))

    absent = median_ms(time_sync(lambda: search_sessions(store, "okapi"), repeat=5, warmup=1))
    report.add(Figure("sessions", "search, text in no transcript", absent, "ms", baseline, raw, note))
    present = median_ms(time_sync(lambda: search_sessions(store, "is fine"), repeat=3, warmup=1))
    report.add(Figure("sessions", "search, text in every transcript", present, "ms", baseline, raw, note))

    one = store.transcript_path("s000")
    parse = median_ms(time_sync(lambda: load_transcript(one), repeat=10, warmup=1))
    exported = median_ms(time_sync(lambda: export_session(store, "s000", "markdown"), repeat=10, warmup=1))
    report.add(
        Figure("sessions", "export one session as Markdown", exported, "ms", "parsing its transcript", parse, note)
    )
