"""Turns from checkpoints: which prompt each turn checkpoint precedes, where the turn ends, what it changed."""

from __future__ import annotations

import datetime as dt

from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.stored_chat import prompt_offsets
from toolgate.agent.transcript import MessageEntry
from toolgate.checkpoints.conversation import mark_of
from toolgate.checkpoints.models import Checkpoint, CheckpointKind
from toolgate.checkpoints.turns import session_turns
from toolgate.core.messages import TextBlock, ToolResult


def _line(message: ChatMessage) -> bytes:
    return MessageEntry(message=message).model_dump_json().encode() + b"\n"


def _checkpoint(
    number: int,
    turn: int,
    kind: CheckpointKind,
    changed: list[str],
    said: bytes | None = None,
    agent_since: int | None = None,
) -> Checkpoint:
    return Checkpoint(
        agent_since=f"{agent_since:06d}" if agent_since is not None else None,
        id=f"{number:06d}",
        session="s",
        turn=turn,
        kind=kind,
        time=dt.datetime.now(dt.UTC),
        changed=changed,
        conversation=mark_of(said) if said is not None else None,
    )


def test_prompts_are_user_messages_with_text_and_turns_end_before_a_restore() -> None:
    first = _line(user_text("first"))
    answer = _line(ChatMessage(role="assistant", content=[TextBlock(text="ok")]))
    results = _line(ChatMessage(role="user", content=[ToolResult(tool_use_id="t1", content="r")]))
    second = _line(user_text("second"))
    transcript = first + answer + results + second
    assert prompt_offsets(transcript + b"not json\n") == [0, len(first + answer + results)]

    checkpoints = [
        _checkpoint(1, 1, "turn", ["edited before the prompt"], b""),
        _checkpoint(2, 1, "tool", ["a"], agent_since=1),  # right after a call: its changes
        # Right before the next call: what the person saved in between (and a rule "Always allow" wrote).
        _checkpoint(3, 1, "tool", ["README.md", ".toolgate/settings.local.json"]),
        _checkpoint(4, 1, "tool", ["b", "a"], agent_since=3),
        _checkpoint(5, 1, "restore", ["c"]),  # a restore after the turn: not the turn's doing
        _checkpoint(6, 2, "turn", [], first + answer + results),
        _checkpoint(7, 3, "turn", [], first + b'{"a line cut away since"}\n'),
        # The conversation was rewound to before turn 2 and went on from there: that prompt is turn 4's now.
        _checkpoint(8, 4, "turn", [], first + answer + results),
    ]
    turns = session_turns(checkpoints, transcript, prompt_offsets(transcript))
    assert [(t.turn, t.start, t.end, t.prompt, t.changed) for t in turns] == [
        (1, "000001", "000004", 0, ["a", "b"]),
        (2, "000006", "000006", None, []),
        (3, "000007", "000007", None, []),
        (4, "000008", "000008", 1, []),
    ]
