"""The loop against the mock over real HTTP, through the real Anthropic SDK."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import SecretStr
from tests.integration.agent.helpers import PNG, ChatFactory, Events, GateTool, PictureTool, Sleeps

from toolgate.agent.context_relief import cleared_note
from toolgate.agent.conversation import ChatMessage
from toolgate.agent.events import (
    CompactionFailed,
    ContextCleared,
    ErrorEvent,
    Retrying,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnEnd,
)
from toolgate.agent.loop import INTERRUPT_NOTE, ChatBusy
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.retry import RetryPolicy
from toolgate.core.context import ToolContext
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.permission import PermissionMode
from toolgate.core.tool import DescribeContext, Tool, ToolInput
from toolgate.mockmodel import MockModelServer


@pytest.fixture(autouse=True)
def files(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]


async def test_multi_turn_tool_use(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model(
        [
            {"text": "Reading a.", "tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
            {"tool_uses": [{"name": "Read", "input": {"file_path": "b.txt"}}]},
            {"text": "a says alpha, b says beta."},
        ]
    )
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("What do a.txt and b.txt say?") == "end_turn"

    assert [r.status for r in mock.requests] == [200, 200, 200]
    second, third = mock.requests[1].json, mock.requests[2].json
    [first_result] = tool_results(second)
    assert first_result["content"] == "1\talpha"
    assert tool_results(third)[0]["content"] == "1\tbeta"
    assert [m.role for m in chat.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert chat.messages[-1].text() == "a says alpha, b says beta."
    assert "".join(e.text for e in events.of(TextDelta)) == "Reading a.a says alpha, b says beta."
    [end] = events.of(TurnEnd)
    assert end.requests == 3 and end.stop_reason == "end_turn"


async def test_several_tool_uses_in_one_reply_answered_in_order(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model(
        [
            {
                "tool_uses": [
                    {"name": "Read", "input": {"file_path": "b.txt"}},
                    {"name": "Read", "input": {"file_path": "a.txt"}},
                    {"name": "Nope", "input": {}},
                    {"name": "TodoWrite", "input": {"todos": [{"id": "1", "content": "Read", "status": "completed"}]}},
                ]
            },
            {"text": "Done."},
        ]
    )
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("go") == "end_turn"

    uses = [b["id"] for b in mock.requests[1].json["messages"][-2]["content"] if b["type"] == "tool_use"]
    results = tool_results(mock.requests[1].json)
    assert [r["tool_use_id"] for r in results] == uses
    assert [r["content"] for r in results[:2]] == ["1\tbeta", "1\talpha"]
    assert results[2]["is_error"] is True and "no tool named 'Nope'" in results[2]["content"]
    assert [e.name for e in events.of(ToolCallStarted)] == ["Read", "Read", "Nope", "TodoWrite"]
    # Finished events come as each call ends (completion order), one per call.
    assert sorted(e.tool_use_id for e in events.of(ToolCallFinished)) == sorted(uses)
    assert [t.status for t in chat.todos] == ["completed"]


async def test_the_content_decides_not_the_stop_reason(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model(
        [
            # A tool call under an "end_turn" stop reason still runs...
            {"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}], "stop_reason": "end_turn"},
            # ...and a "tool_use" stop reason without any tool call ends the turn.
            {"text": "All done.", "stop_reason": "tool_use"},
        ]
    )
    chat = make_chat(mock)

    assert await chat.send("go") == "end_turn"

    assert len(mock.requests) == 2
    assert tool_results(mock.requests[1].json)[0]["content"] == "1\talpha"


async def test_interrupt_while_streaming_then_the_next_request_is_valid(
    mock_model: Any, make_chat: ChatFactory
) -> None:
    mock = mock_model([{"text": "Let me think about", "hang": True}, {"text": "Fine."}])
    chat = make_chat(mock)
    events = Events(chat)
    stops: list[str] = []

    async with anyio.create_task_group() as group:

        async def run() -> None:
            stops.append(await chat.send("Explain everything."))

        group.start_soon(run)
        await events.wait_for(lambda: "".join(e.text for e in events.of(TextDelta)) == "Let me think about")
        assert chat.interrupt()

    assert stops == ["interrupted"]
    assert mock.wait_for(lambda m: m.requests[0].disconnected)
    assert chat.messages[-2] == ChatMessage.model_validate(
        {"role": "assistant", "content": [{"type": "text", "text": "Let me think about"}]}
    )
    assert chat.messages[-1].text() == INTERRUPT_NOTE

    assert await chat.send("Shorter, please.") == "end_turn"
    second = mock.requests[1]
    assert second.status == 200 and second.rejection is None
    assert [b["text"] for b in second.json["messages"][-1]["content"]] == [INTERRUPT_NOTE, "Shorter, please."]


async def test_interrupt_while_a_tool_runs_answers_every_call(mock_model: Any, make_chat: ChatFactory) -> None:
    gate = GateTool()
    mock = mock_model(
        [
            {
                "tool_uses": [
                    {"name": "Read", "input": {"file_path": "a.txt"}},
                    {"name": "Gate", "input": {"label": "slow"}},
                    {"name": "Read", "input": {"file_path": "b.txt"}},
                ]
            },
            {"text": "Understood."},
        ]
    )
    chat = make_chat(mock, tools=[gate])
    stops: list[str] = []

    async with anyio.create_task_group() as group:

        async def run() -> None:
            stops.append(await chat.send("go"))

        group.start_soon(run)
        with anyio.fail_after(10):
            await gate.started.wait()
        chat.interrupt()

    assert stops == ["interrupted"]
    results = chat.messages[-1].tool_results()
    assert [r.is_error for r in results] == [False, True, True]
    assert results[0].content == "1\talpha"
    assert results[1].content == "slow: stopped at the gate"  # the tool's partial result
    assert "Not run" in results[2].text()
    assert chat.messages[-1].text() == INTERRUPT_NOTE

    assert await chat.send("ok") == "end_turn"
    assert mock.requests[1].status == 200, mock.requests[1].rejection


async def test_a_cancelled_send_still_answers_every_call(mock_model: Any, make_chat: ChatFactory) -> None:
    gate = GateTool()
    mock = mock_model([{"tool_uses": [{"name": "Gate", "input": {}}]}, {"text": "ok"}])
    chat = make_chat(mock, tools=[gate])

    async with anyio.create_task_group() as group:
        group.start_soon(chat.send, "go")
        with anyio.fail_after(10):
            await gate.started.wait()
        group.cancel_scope.cancel()  # the caller goes away (e.g. the editor cancels the request)

    assert not chat.busy
    assert [r.tool_use_id for r in chat.messages[-2].tool_results()] == [u.id for u in chat.messages[-3].tool_uses()]
    assert await chat.send("again") == "end_turn"
    assert mock.requests[1].status == 200, mock.requests[1].rejection


async def test_send_while_busy_is_refused(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"text": "...", "hang": True}])
    chat = make_chat(mock)
    events = Events(chat)
    async with anyio.create_task_group() as group:
        group.start_soon(chat.send, "one")
        await events.wait_for(lambda: bool(events.of(TextDelta)))
        with pytest.raises(ChatBusy):
            await chat.send("two")
        chat.interrupt()


async def test_transient_errors_are_retried_with_backoff(
    mock_model: Any, make_chat: ChatFactory, sleeps: Sleeps
) -> None:
    mock = mock_model(
        [
            {"error": {"status": 429, "message": "slow down", "retry_after": 0.5}},
            {"error": {"status": 529, "message": "Overloaded"}},
            {"error": {"status": 500, "message": "oops"}},
            {"text": "Made it."},
        ]
    )
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("hi") == "end_turn"

    assert [r.status for r in mock.requests] == [429, 529, 500, 200]
    assert [e.kind for e in events.of(Retrying)] == ["rate_limit", "overloaded", "server"]
    assert sleeps.delays[0] == 0.5  # the server's retry-after wins
    # Exponential with ±25% jitter: attempt 2 waits about 2s, attempt 3 about 4s.
    assert 1.5 <= sleeps.delays[1] <= 2.5 and 3.0 <= sleeps.delays[2] <= 5.0
    assert chat.messages[-1].text() == "Made it."


async def test_an_error_inside_the_stream_restarts_the_reply(
    mock_model: Any, make_chat: ChatFactory, sleeps: Sleeps
) -> None:
    mock = mock_model([{"text": "Half an ans", "stream_error": {"status": 529}}, {"text": "A whole answer."}])
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("hi") == "end_turn"

    [retry] = events.of(Retrying)
    assert retry.kind == "overloaded" and retry.discard_partial
    assert [m.text() for m in chat.messages if m.role == "assistant"] == ["A whole answer."]


async def test_giving_up_leaves_a_valid_conversation(mock_model: Any, make_chat: ChatFactory, sleeps: Sleeps) -> None:
    mock = mock_model([{"error": {"status": 529}} for _ in range(4)] + [{"text": "Back."}])
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("hi") == "error"
    [error] = events.of(ErrorEvent)
    assert error.kind == "overloaded" and "Gave up after 4 attempts" in error.message
    assert len(sleeps.delays) == 3

    assert await chat.send("hi again") == "end_turn"
    assert mock.requests[-1].status == 200


@pytest.mark.parametrize(
    ("status", "message", "kind", "words"),
    [
        (401, "invalid x-api-key", "auth", "ANTHROPIC_API_KEY"),
        (400, "prompt is too long: 212000 tokens > 200000 maximum", "context_too_long", "context window"),
        (404, "model: mock-model", "not_found", "no model 'mock-model'"),
        (400, "messages.0: something else", "bad_request", "refused the request"),
    ],
)
async def test_api_errors_in_plain_words(
    mock_model: Any, make_chat: ChatFactory, sleeps: Sleeps, status: int, message: str, kind: str, words: str
) -> None:
    mock = mock_model([{"error": {"status": status, "message": message}}])
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("hi") == "error"

    [error] = events.of(ErrorEvent)
    assert error.kind == kind
    assert words in error.message and message in error.message
    assert sleeps.delays == []  # not retried


async def test_a_context_overflow_clears_old_tool_outputs_and_goes_on(
    mock_model: Any, make_chat: ChatFactory, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("".join(f"line {n} of a big file\n" for n in range(2000)))
    overflow = {"error": {"status": 400, "message": "prompt is too long: 212000 tokens > 200000 maximum"}}
    mock = mock_model(
        [
            {"tool_uses": [{"name": "Read", "input": {"file_path": "big.txt"}}]},
            overflow,  # the big output no longer fits
            {"text": "Done, without the big file."},
        ]
    )
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("Summarise big.txt") == "end_turn"

    # One exchange only: nothing older to summarise, so compaction says so and clearing makes the room.
    [failed] = events.of(CompactionFailed)
    assert failed.trigger == "overflow" and "nothing before the latest exchange" in failed.message
    [cleared] = events.of(ContextCleared)
    assert cleared.cleared == 1 and "context window" in cleared.message and "output store" in cleared.message
    assert events.of(ErrorEvent) == []
    before, after = tool_results(mock.requests[1].json), tool_results(mock.requests[2].json)
    assert "line 1999 of a big file" in before[0]["content"]
    assert after[0]["tool_use_id"] == before[0]["tool_use_id"]
    ref = re.search(r"stored as (out-[0-9a-f]+)", after[0]["content"])
    assert ref is not None and after[0]["content"] == cleared_note(ref.group(1))
    assert chat.messages[-1].text() == "Done, without the big file."
    # The cleared output is read back by its reference, whole, without running the call again.
    [read_back] = await chat.runtime.orchestrator.run_turn(
        [ToolUse(id="toolu_back", name="ToolOutputGrep", input={"ref": ref.group(1), "pattern": "line 1999 of"})]
    )
    assert not read_back.is_error and "line 1999 of a big file" in read_back.text()


async def test_an_overflow_with_nothing_left_to_clear_is_reported(mock_model: Any, make_chat: ChatFactory) -> None:
    overflow = {"error": {"status": 400, "message": "prompt is too long: 212000 tokens > 200000 maximum"}}
    mock = mock_model([{"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}, overflow])
    chat = make_chat(mock)
    events = Events(chat)

    assert await chat.send("hi") == "error"  # a.txt's output is too small to be worth clearing
    assert events.of(ContextCleared) == []
    [error] = events.of(ErrorEvent)
    assert error.kind == "context_too_long" and "Start a new session" in error.message


async def test_an_unreachable_server_is_a_connection_error(make_chat: ChatFactory, sleeps: Sleeps) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dead = MockModelServer([])  # never started: only its URL shape is used
    dead_url = f"http://127.0.0.1:{port}"
    dead._server.server_close()
    chat = make_chat(dead)
    chat.provider = make_provider(
        ModelConfig(provider="anthropic", base_url=dead_url, api_key=SecretStr("k"), model="m", timeout_seconds=5)
    )
    events = Events(chat)

    assert await chat.send("hi") == "error"

    [error] = events.of(ErrorEvent)
    assert error.kind == "connection" and dead_url in error.message
    assert len(sleeps.delays) == 3


async def test_prompt_cache_markers_and_a_byte_identical_prefix(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model(
        [
            {"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
            {"tool_uses": [{"name": "Read", "input": {"file_path": "b.txt"}}]},
            {"text": "Done."},
            {"text": "Again."},
        ]
    )
    chat = make_chat(mock)
    events = Events(chat)
    await chat.send("one")
    await chat.send("two")

    for request in mock.requests:
        body = request.json
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in t for t in body["tools"][:-1])
        assert [t["name"] for t in body["tools"]] == sorted(t["name"] for t in body["tools"])
        marked = [b for m in body["messages"] for b in m["content"] if "cache_control" in b]
        assert marked == [body["messages"][-1]["content"][-1]]  # one moving marker, on the newest block
    # The SDK writes the body as compact JSON with `system` and `tools` last: those bytes are the prefix.
    prefixes = {r.body[r.body.rindex(b',"system":[') :] for r in mock.requests}
    assert len(mock.requests) == 4 and len(prefixes) == 1
    ends = events.of(TurnEnd)
    assert ends[0].usage.cache_creation_input_tokens > 0 and ends[1].usage.cache_read_input_tokens > 0


async def test_images_in_tool_results_reach_the_model(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"tool_uses": [{"name": "Picture", "input": {}}]}, {"text": "A pixel."}])
    chat = make_chat(mock, tools=[PictureTool()])

    await chat.send("show me")

    [result] = tool_results(mock.requests[1].json)
    assert result["content"][0] == {"type": "text", "text": "one pixel"}
    image = result["content"][1]
    assert image["type"] == "image" and image["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}


async def test_a_call_cut_off_by_the_token_limit_is_not_run(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model(
        [
            {
                "tool_uses": [{"name": "TodoWrite", "raw_arguments": '{"todos": [{"id": "1", "content": "Wri'}],
                "stop_reason": "max_tokens",
            },
            {"tool_uses": [{"name": "Read", "raw_arguments": '{"file_path": a.txt}'}]},
            {"text": "ok"},
        ]
    )
    chat = make_chat(mock)

    assert await chat.send("go") == "end_turn"

    cut, bad = (tool_results(r.json)[0] for r in mock.requests[1:3])
    assert cut["is_error"] and "cut off at the output token limit" in cut["content"]
    assert bad["is_error"] and "not valid JSON" in bad["content"]
    assert chat.todos == []  # the truncated list was never applied
    sent_back = mock.requests[1].json["messages"][-2]["content"][0]
    assert sent_back["type"] == "tool_use" and sent_back["input"] == {}


async def test_max_turns_stops_with_every_call_answered(mock_model: Any, make_chat: ChatFactory) -> None:
    read = {"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}
    mock = mock_model([read, read, read, {"text": "ok"}])
    chat = make_chat(mock, max_turns=2)

    assert await chat.send("loop") == "max_turns"
    assert len(mock.requests) == 2
    assert isinstance(chat.messages[-1].content[0], ToolResult)

    assert await chat.send("continue") == "end_turn"
    assert [r.status for r in mock.requests] == [200] * 4


async def test_an_empty_reply_ends_the_turn(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{}, {"text": "Now I answer."}])
    chat = make_chat(mock)

    assert await chat.send("hm?") == "end_turn"
    assert [m.role for m in chat.messages] == ["user"]
    assert await chat.send("hello?") == "end_turn"
    assert mock.requests[1].status == 200
    assert [b["text"] for b in mock.requests[1].json["messages"][0]["content"]] == ["hm?", "hello?"]


async def test_tool_use_ids_round_trip(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"tool_uses": [{"id": "toolu_fixed", "name": "Read", "input": {"file_path": "a.txt"}}]}, {}])
    chat = make_chat(mock)
    await chat.send("x")
    use = chat.messages[1].content[0]
    assert isinstance(use, ToolUse) and use.id == "toolu_fixed"


async def test_built_once_and_identical_across_requests(
    mock_model: Any, make_chat: ChatFactory, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Be brief.\n")
    mock = mock_model([{"tool_uses": [{"name": "TodoWrite", "input": {"todos": []}}]}, {"text": "ok"}])
    chat = make_chat(mock, system_prompt=None)
    (workspace / "AGENTS.md").write_text("Changed mid-session: not picked up until the next session.\n")
    await chat.send("hi")
    systems = [r.json["system"] for r in mock.requests]
    assert systems[0] == systems[1] and "Be brief." in systems[0][0]["text"]


async def test_interrupt_during_the_backoff_keeps_no_void_text(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"text": "Void half", "stream_error": {"status": 529}}])
    chat = make_chat(mock, retry=RetryPolicy(base_delay=60, jitter=0))  # a real, long sleep
    events = Events(chat)
    stops: list[str] = []

    async with anyio.create_task_group() as group:

        async def run() -> None:
            stops.append(await chat.send("hi"))

        group.start_soon(run)
        await events.wait_for(lambda: bool(events.of(Retrying)))
        chat.interrupt()

    assert stops == ["interrupted"]
    assert [m.role for m in chat.messages] == ["user"]  # no assistant message made of the void reply
    assert chat.messages[0].text() == "hi" + INTERRUPT_NOTE


async def test_the_configured_token_limit_is_sent(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"text": "ok"}])
    chat = make_chat(mock)
    await chat.send("hi")
    assert chat.max_tokens == chat.provider.max_tokens == mock.requests[0].json["max_tokens"] == 16_384


async def test_an_empty_message_is_refused(mock_model: Any, make_chat: ChatFactory) -> None:
    chat = make_chat(mock_model([]))
    with pytest.raises(ValueError, match="empty"):
        await chat.send("  \n")
    assert chat.messages == []


class ModeInput(ToolInput):
    pass


class ModeTool(Tool[ModeInput, str]):
    name = "Mode"
    input_model = ModeInput
    described = 0

    def description(self, ctx: DescribeContext) -> str:
        ModeTool.described += 1
        return f"Says the mode ({ctx.mode.value})."

    async def call(self, tool_input: ModeInput, ctx: ToolContext) -> str:
        return ""

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


async def test_definitions_are_reused_until_the_mode_changes(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"tool_uses": [{"name": "TodoWrite", "input": {"todos": []}}]}, {"text": "a"}, {"text": "b"}])
    chat = make_chat(mock, tools=[ModeTool()])
    ModeTool.described = 0
    await chat.send("one")
    chat.runtime.session.mode = PermissionMode.ACCEPT_EDITS
    await chat.send("two")

    def description(request: Any) -> str:
        return next(t["description"] for t in request.json["tools"] if t["name"] == "Mode")

    assert [description(r) for r in mock.requests] == [
        "Says the mode (default).",
        "Says the mode (default).",
        "Says the mode (acceptEdits).",
    ]
    assert ModeTool.described == 2  # once per mode, not once per request
