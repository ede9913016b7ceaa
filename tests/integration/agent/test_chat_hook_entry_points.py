"""The hook entry points the compaction and subagent code call (PreCompact, SessionStart "compact",
SubagentStop), driven by a fake compaction over a real chat, and SessionEnd when the chat closes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.integration.agent.helpers import ChatFactory, Events

from toolgate.agent.chat_hooks import MAX_CONTINUATIONS
from toolgate.agent.events import HookReport
from toolgate.agent.loop import AgentChat
from toolgate.mockmodel import MockModelServer


def user_hooks(hooks: dict[str, tuple[str, str]]) -> None:
    """{event: (matcher, command)} in the user settings file."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    entries = {e: [{"matcher": m, "hooks": [{"type": "command", "command": c}]}] for e, (m, c) in hooks.items()}
    path.write_text(json.dumps({"hooks": entries}))


def logger(log: Path, then: str = "") -> str:
    return f'payload=$(cat); printf "%s\\n" "$payload" >> {log}; {then}'


def entries(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def fake_compaction(chat: AgentChat) -> tuple[list[str], list[str]]:
    """What the compaction code does around its summary: PreCompact before, SessionStart "compact" after."""
    instructions = await chat.hooks.pre_compact("auto")
    return instructions, await chat.hooks.session_start("compact")


async def test_a_compaction_runs_pre_compact_then_session_start_compact(
    mock_model: Callable[[list[Any]], MockModelServer], make_chat: ChatFactory, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    user_hooks(
        {
            "PreCompact": ("auto", logger(log, 'echo \'{"additional_context": "keep the API notes"}\'')),
            "SessionStart": ("compact", logger(log, "echo 'you were compacted'")),
            "SessionEnd": ("", logger(log)),
        }
    )
    chat = make_chat(mock_model([{"text": "hello"}]))
    assert await chat.send("hi") == "end_turn"
    assert entries(log) == []  # a new session: the SessionStart hook matches "compact" only
    instructions, context = await fake_compaction(chat)
    assert instructions == ["keep the API notes"] and context == ["you were compacted"]
    await chat.aclose(reason="closed")
    assert [(e["hook_event_name"], e.get("trigger") or e.get("source") or e.get("reason")) for e in entries(log)] == [
        ("PreCompact", "auto"),
        ("SessionStart", "compact"),
        ("SessionEnd", "closed"),
    ]


async def test_a_subagent_stop_hook_continues_a_subagent_within_the_bound(
    mock_model: Callable[[list[Any]], MockModelServer], make_chat: ChatFactory, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    user_hooks({"SubagentStop": ("", logger(log, "echo 'check the edge cases' >&2; exit 2"))})
    chat = make_chat(mock_model([]))
    events = Events(chat)
    note = await chat.hooks.stop("end_turn", 0, subagent=True)
    assert note is not None and "check the edge cases" in note
    assert await chat.hooks.stop("end_turn", MAX_CONTINUATIONS, subagent=True) is None
    reports = [(r.event, r.outcome) for r in events.of(HookReport)]
    assert reports == [("SubagentStop", "continued"), ("SubagentStop", "limit")]
    assert [e["continuations"] for e in entries(log)] == [0, MAX_CONTINUATIONS]
