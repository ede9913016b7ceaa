"""The loop against the mock over real HTTP, through the real OpenAI SDK (Chat Completions)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.integration.agent.helpers import PNG, ChatFactory, Events, PictureTool, Sleeps

from toolgate.agent.events import ErrorEvent, Retrying, TextDelta, ToolCallStarted, UsageReport
from toolgate.agent.loop import INTERRUPT_NOTE
from toolgate.agent.providers.base import ModelRequest
from toolgate.agent.providers.openai import KNOWN_SERVERS


@pytest.fixture(autouse=True)
def files(workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "notes.md").write_text("one\ntwo\nthree\n")


@pytest.fixture(autouse=True)
def forget_servers() -> Iterator[None]:
    """What a test's mock taught the providers is kept per base URL for the process's life; a later test's mock may
    get the same port."""
    yield
    KNOWN_SERVERS.clear()


async def test_tool_call_arguments_streamed_in_fragments_are_reassembled(
    mock_model: Any, make_chat: ChatFactory
) -> None:
    todos = [{"id": "t1", "content": "Read the notes — carefully", "status": "in_progress"}]
    mock = mock_model(
        [
            {
                "text": "Reading two things.",
                "chunk_chars": 2,  # every argument string arrives in two-character pieces
                "tool_uses": [
                    {"name": "Read", "input": {"file_path": "notes.md", "offset": 2, "limit": 1}},
                    {"name": "TodoWrite", "input": {"todos": todos}},
                ],
            },
            {"text": "The second line is two."},
        ]
    )
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("What is on line 2 of notes.md?") == "end_turn"

    assert [e.input for e in events.of(ToolCallStarted)] == [
        {"file_path": "notes.md", "offset": 2, "limit": 1},
        {"todos": todos},
    ]
    messages = mock.requests[1].json["messages"]
    assistant, read_result, todo_result = messages[-3:]
    assert assistant["role"] == "assistant" and assistant["content"] == "Reading two things."
    calls = assistant["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [e.input for e in events.of(ToolCallStarted)]
    assert read_result == {"role": "tool", "tool_call_id": calls[0]["id"], "content": "2\ttwo"}
    assert todo_result["tool_call_id"] == calls[1]["id"]
    assert [t.content for t in chat.todos] == ["Read the notes — carefully"]
    assert messages[0]["role"] == "system" and messages[0]["content"] == "You are a test model."
    names = [t["function"]["name"] for t in mock.requests[0].json["tools"]]
    assert names == sorted(names) and {"Read", "TodoWrite"} <= set(names)
    assert mock.requests[0].json["max_tokens"] > 0  # a compatible server gets the classic parameter


async def test_images_from_tool_results_follow_in_a_user_message(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"tool_uses": [{"name": "Picture", "input": {}}]}, {"text": "A pixel."}])
    chat = make_chat(mock, "openai", tools=[PictureTool()])

    await chat.send("show me")

    tool, user = mock.requests[1].json["messages"][-2:]
    assert tool["role"] == "tool" and tool["content"].startswith("one pixel")
    assert user["role"] == "user"
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}


async def test_interrupt_while_streaming_then_the_next_request_is_valid(
    mock_model: Any, make_chat: ChatFactory
) -> None:
    mock = mock_model([{"text": "Well,", "hang": True}, {"text": "Short answer."}])
    chat = make_chat(mock, "openai")
    events = Events(chat)

    async with anyio.create_task_group() as group:
        group.start_soon(chat.send, "Tell me a long story.")
        await events.wait_for(lambda: bool(events.of(TextDelta)))
        chat.interrupt()

    assert mock.wait_for(lambda m: m.requests[0].disconnected)
    assert await chat.send("Shorter.") == "end_turn"
    second = mock.requests[1]
    assert second.status == 200, second.rejection
    assert second.json["messages"][-2] == {"role": "assistant", "content": "Well,"}
    assert second.json["messages"][-1] == {"role": "user", "content": f"{INTERRUPT_NOTE}\n\nShorter."}


async def test_rate_limits_are_retried(mock_model: Any, make_chat: ChatFactory, sleeps: Sleeps) -> None:
    mock = mock_model([{"error": {"status": 429, "retry_after": 1.5}}, {"error": {"status": 503}}, {"text": "ok"}])
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("hi") == "end_turn"

    assert [e.kind for e in events.of(Retrying)] == ["rate_limit", "server"]
    assert sleeps.delays[0] == 1.5


async def test_an_error_inside_the_stream_is_retried(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"text": "Hal", "stream_error": {"status": 500, "type": "server_error"}}, {"text": "Whole."}])
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("hi") == "end_turn"
    [retry] = events.of(Retrying)
    assert retry.kind == "server" and retry.discard_partial
    assert chat.messages[-1].text() == "Whole."


async def test_context_overflow_in_plain_words(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model(
        [
            {
                "error": {
                    "status": 400,
                    "type": "context_length_exceeded",
                    "message": "This model's maximum context length is 8192 tokens.",
                }
            }
        ]
    )
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("hi") == "error"
    [error] = events.of(ErrorEvent)
    assert error.kind == "context_too_long" and "Start a new session" in error.message


async def test_malformed_arguments_are_answered_not_run(mock_model: Any, make_chat: ChatFactory) -> None:
    mock = mock_model([{"tool_uses": [{"name": "Read", "raw_arguments": "{file_path: 'a.txt'}"}]}, {"text": "ok"}])
    chat = make_chat(mock, "openai")

    assert await chat.send("go") == "end_turn"

    assistant, tool = mock.requests[1].json["messages"][-2:]
    assert assistant["tool_calls"][0]["function"]["arguments"] == "{file_path: 'a.txt'}"  # as the model wrote it
    assert "not valid JSON" in tool["content"]


async def test_usage_of_a_compatible_server_fills_the_context_line(mock_model: Any, make_chat: ChatFactory) -> None:
    # A compatible server (here the mock, like vLLM or Ollama) streams usage only when the request asks for it.
    mock = mock_model([{"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}, {"text": "Read it."}])
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("read a.txt") == "end_turn"

    first, second = events.of(UsageReport)
    for report, request in zip((first, second), mock.requests, strict=True):
        prompt_chars = len(json.dumps(request.json["messages"]))
        # OpenAI's prompt_tokens is the whole prompt, its cached part included: that is the context used.
        assert report.context_tokens == report.usage.input_tokens >= prompt_chars // 4 > 0
        assert report.usage.output_tokens > 0
    assert first.usage.cache_read_input_tokens == 0
    assert 0 < second.usage.cache_read_input_tokens < second.usage.input_tokens  # the same system + tools prefix
    assert second.context_tokens > first.context_tokens  # the conversation grew by the call and its result
    assert second.total_usage == first.usage.add(second.usage)


async def test_a_server_that_reports_no_usage_gets_an_estimate_said_to_be_one(
    mock_model: Any, make_chat: ChatFactory
) -> None:
    mock = mock_model({"steps": [{"text": "Hello."}], "reports_usage": False})
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("hi") == "end_turn"

    [report] = events.of(UsageReport)
    assert report.usage.input_tokens == 0  # nothing came from the server
    # The estimate of the request (tools, system prompt, the message): about the request body's size.
    body_tokens = len(mock.requests[0].body) // 4
    assert report.context_estimated and body_tokens // 2 <= report.context_tokens <= 2 * body_tokens
    assert report.cost_usd is None and report.total_cost_usd is None  # not zero: unknown


@pytest.mark.parametrize("refusal", [400, 422])
async def test_a_server_that_refuses_stream_options_is_asked_again_without_them_and_never_again_with_them(
    mock_model: Any, make_chat: ChatFactory, refusal: int
) -> None:
    steps = [{"tool_uses": [{"name": "Read", "input": {"file_path": "a.txt"}}]}, {"text": "Read it."}]
    mock = mock_model({"steps": steps, "refuses_stream_options": refusal})
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("read a.txt") == "end_turn"

    refused, asked_again, next_request = mock.requests
    assert (refused.status, refused.json["stream_options"]) == (refusal, {"include_usage": True})
    assert (asked_again.status, next_request.status) == (200, 200)
    assert "stream_options" not in asked_again.json and "stream_options" not in next_request.json
    assert asked_again.json == {k: v for k, v in refused.json.items() if k != "stream_options"}  # the same request
    assert events.of(Retrying) == [] and events.of(ErrorEvent) == []
    # No usage came: the context line shows the estimate, as for a server that sends none.
    assert [(r.usage.input_tokens, r.context_estimated) for r in events.of(UsageReport)] == [(0, True), (0, True)]
    # A subagent's copy of the provider (another model, the same server) knows it too.
    request = ModelRequest(system="s", tools=[], messages=[], max_tokens=10)
    assert "stream_options" not in copy.copy(chat.provider).build_params(request)


async def test_a_400_for_another_reason_is_the_usual_error_and_is_not_sent_again(
    mock_model: Any, make_chat: ChatFactory
) -> None:
    refusal = {"status": 400, "message": "Unrecognized request argument supplied: parallel_tool_calls"}
    mock = mock_model({"steps": [{"error": refusal}]})
    chat = make_chat(mock, "openai")
    events = Events(chat)

    assert await chat.send("hi") == "error"

    [request] = mock.requests
    assert request.json["stream_options"] == {"include_usage": True}
    [error] = events.of(ErrorEvent)
    assert error.kind == "bad_request" and "parallel_tool_calls" in error.message
