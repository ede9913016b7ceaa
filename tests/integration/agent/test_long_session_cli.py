"""A long scripted session through `toolgate chat --print` against a mock model with a small window: it runs to
its final answer by compacting; `--compact` summarises a stored session on request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolgate.mockmodel import MockModelServer
from toolgate.mockmodel.sessions import FINAL_ANSWER, long_session, scripted_summary, write_long_session_files

WINDOW = 20_000  # tokens: the tools and the system prompt take about 5,400 of them, one file about 2,500


def _chat(
    args: list[str], mock: MockModelServer, tmp_path: Path, *more_env: tuple[str, str]
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), ANTHROPIC_BASE_URL=mock.url, ANTHROPIC_API_KEY="test-key")
    return subprocess.run(
        [sys.executable, "-m", "toolgate", "chat", "--print", *args, "--data-dir", str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
    )


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_40_request_session_reading_large_files_finishes_in_a_small_window(tmp_path: Path, workspace: Path) -> None:
    files = write_long_session_files(workspace, 39)
    with MockModelServer(long_session(files, context_window=WINDOW)) as mock:
        run = _chat(
            ["Read every module", "--workspace", str(workspace), "--output-format", "stream-json",
             "--context-window", str(WINDOW), "--session-id", "long1"],
            mock, tmp_path,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        events = _events(run.stdout)
        assert events[-1]["type"] == "result" and events[-1]["text"] == FINAL_ANSWER
        compactions = [e for e in events if e["type"] == "compacted"]
        assert len(compactions) >= 3 and all(e["trigger"] == "auto" for e in compactions)
        assert all(e["tokens_after"] < e["tokens_before"] for e in compactions)
        assert [r.rejection for r in mock.requests if r.status != 200] == []  # it never went over the window
        main = [r for r in mock.requests if r.json.get("tools")]
        assert len(main) == 40 and mock.steps_left == 0
        usage = [e for e in events if e["type"] == "usage"]
        assert len(usage) == 40  # one per main request (a summary's usage is in its compacted event)
        assert all(e["context_tokens"] <= WINDOW and e["context_window"] == WINDOW for e in usage)

        # The transcript keeps every message: the summarised ones too.
        transcript = (tmp_path / "data" / "sessions" / "long1" / "transcript.jsonl").read_text()
        assert all(f"{name[:-3]}" in transcript for name in files) and '"type":"compacted"' in transcript


def test_compact_on_request_summarises_a_stored_session(tmp_path: Path, workspace: Path) -> None:
    files = write_long_session_files(workspace, 3, lines=20)
    with MockModelServer(long_session(files)) as mock:
        first = _chat(["Read them", "--workspace", str(workspace), "--session-id", "c1"], mock, tmp_path)
        assert first.returncode == 0, first.stderr
        compact = _chat(["--resume", "c1", "--compact", "the parser"], mock, tmp_path)
        assert compact.returncode == 0, compact.stderr
        assert "compacted: 7 earlier messages summarised, 1 kept" in compact.stderr
        [summary_request] = [r for r in mock.requests if not r.json.get("tools")]
        assert "focus on: the parser" in summary_request.json["messages"][0]["content"][0]["text"]

        nothing = _chat(["--resume", "c1", "--compact"], mock, tmp_path)  # only the summary and one exchange left
        assert nothing.returncode == 1 and "Compaction failed. There is nothing before" in nothing.stderr
        entries = _events((tmp_path / "data" / "sessions" / "c1" / "transcript.jsonl").read_text())
        [compacted] = [e for e in entries if e["type"] == "compacted"]
        assert scripted_summary() in compacted["head"][0]["content"][0]["text"]
        assert sum(e["type"] == "message" for e in entries) == 8  # the summarised messages are all still there
