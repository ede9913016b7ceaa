"""Clearing old tool outputs to fit the context window: which go first, and what stays intact."""

from __future__ import annotations

from pathlib import Path

from toolgate.agent.context_relief import CLEARED, clear_results, cleared_note, results_to_clear
from toolgate.agent.conversation import ChatMessage, user_text
from toolgate.agent.transcript import ClearedEntry, MessageEntry, Transcript, load_transcript
from toolgate.core.messages import ImageBlock, ImageSource, TextBlock, ToolResult, ToolUse

BIG = "x" * 5000


def turn(n: int, output: str | list[TextBlock | ImageBlock] = BIG) -> list[ChatMessage]:
    """One tool round trip: the assistant's call and the user message with its result."""
    return [
        ChatMessage(role="assistant", content=[ToolUse(id=f"t{n}", name="Read", input={"file_path": f"{n}.txt"})]),
        ChatMessage(role="user", content=[ToolResult(tool_use_id=f"t{n}", content=output)]),
    ]


def conversation(turns: int) -> list[ChatMessage]:
    messages = [user_text("go")]
    for n in range(1, turns + 1):
        messages += turn(n)
    return messages


def test_the_oldest_outputs_go_first_and_the_latest_last() -> None:
    messages = conversation(5)
    first = results_to_clear(messages)
    assert first == ["t1", "t2"]  # the last three turns keep their outputs
    messages = clear_results(messages, first)
    second = results_to_clear(messages)
    assert second == ["t3", "t4"]  # then all but the last one
    messages = clear_results(messages, second)
    assert results_to_clear(messages) == ["t5"]  # then even the last one
    messages = clear_results(messages, ["t5"])
    assert results_to_clear(messages) == []  # nothing left: the loop reports the overflow


def test_clearing_keeps_the_pairing_and_every_other_block() -> None:
    messages = [*conversation(1), user_text("and then?")]
    cleared = clear_results(messages, ["t1"])
    [result] = cleared[2].tool_results()
    assert result.tool_use_id == "t1" and result.content == CLEARED
    assert cleared[1] is messages[1] and cleared[0] is messages[0]  # untouched messages are the same objects
    assert messages[2].tool_results()[0].content == BIG  # the original is not changed
    assert [m.role for m in cleared] == [m.role for m in messages]


def test_small_outputs_stay_and_images_go() -> None:
    png = ImageBlock(source=ImageSource(media_type="image/png", data="iVBORw0KGgo="))
    messages = [user_text("go"), *turn(1, "File created."), *turn(2, [TextBlock(text="a chart"), png])]
    messages += turn(3) + turn(4) + turn(5)
    assert results_to_clear(messages) == ["t2"]  # t1's short answer costs nothing worth saving


def test_a_resumed_session_comes_back_already_cleared(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    for message in conversation(2):
        transcript.append(MessageEntry(message=message))
    transcript.append(ClearedEntry(tool_use_ids=["t1"]))
    transcript.close()
    loaded = load_transcript(path)
    results = [r for m in loaded.messages for r in m.tool_results()]
    assert [(r.tool_use_id, r.content == CLEARED) for r in results] == [("t1", True), ("t2", False)]


def test_a_resumed_session_keeps_the_references_of_its_cleared_outputs(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    transcript = Transcript(path)
    for message in conversation(2):
        transcript.append(MessageEntry(message=message))
    transcript.append(ClearedEntry(tool_use_ids=["t1"], refs={"t1": "out-0badcafe"}))
    transcript.close()
    [first, second] = [r for m in load_transcript(path).messages for r in m.tool_results()]
    assert first.content == cleared_note("out-0badcafe") and 'ToolOutput(ref="out-0badcafe"' in first.content
    assert second.content == BIG
