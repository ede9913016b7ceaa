"""Compaction over real HTTP against the mock model: the summary side request, readFileState after it, the
overflow and failure paths, the prompt-cache prefix, resume and rewind across a compaction."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import SecretStr
from tests.integration.agent.helpers import Events

from toolgate.agent.compaction_plan import SECTIONS, SUMMARY_SYSTEM
from toolgate.agent.events import (
    Compacted,
    CompactionFailed,
    ContextCleared,
    ErrorEvent,
    ToolCallFinished,
    UsageReport,
)
from toolgate.agent.loop import AgentChat
from toolgate.agent.providers import ModelConfig, make_provider
from toolgate.agent.stored_chat import open_chat, reload_conversation
from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.mockmodel import MockModelServer, RecordedRequest
from toolgate.runtime import RuntimeOptions
from toolgate.session_files import SessionFiles

SUMMARY = "\n".join(f"## {section}\nsomething about {section.lower()}" for section in SECTIONS)


def read(path: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Read", "input": {"file_path": path}}]}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}]}


def big(name: str, lines: int = 120) -> str:
    return "".join(f"{name} line {n}: some text that fills the context window\n" for n in range(lines))


@pytest.fixture
def store(tmp_path: Path) -> SessionFiles:
    return SessionFiles(tmp_path / "data")


@pytest.fixture
def mocks() -> Iterator[list[MockModelServer]]:
    started: list[MockModelServer] = []
    yield started
    for mock in started:
        mock.stop()


def start(mocks: list[MockModelServer], script: dict[str, Any]) -> MockModelServer:
    mock = MockModelServer(script).start()
    mocks.append(mock)
    return mock


def chat_on(
    mock: MockModelServer,
    store: SessionFiles,
    workspace: Path,
    *,
    resume: str | None = None,
    provider: str = "anthropic",
    **config: Any,
) -> AgentChat:
    url = mock.url if provider == "anthropic" else mock.openai_url
    model = ModelConfig.model_validate(
        {"provider": provider, "model": "mock-model", "api_key": SecretStr("k"), "base_url": url, **config}
    )
    chat, _ = open_chat(
        store,
        make_provider(model),
        NonInteractiveApprover(),
        workspace=workspace,
        resume=resume,
        runtime=RuntimeOptions(mode=PermissionMode.ACCEPT_EDITS),
        system_prompt="You are a test model.",
    )
    return chat


def results(request: RecordedRequest) -> dict[str, str]:
    """tool_use id → the text of its result, over the whole request."""
    out: dict[str, str] = {}
    for message in request.json["messages"]:
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block["content"]
                out[block["tool_use_id"]] = content if isinstance(content, str) else json.dumps(content)
    return out


def prefix(request: RecordedRequest) -> str:
    """The prompt cache's prefix: the system prompt (OpenAI: the first message) and the tool definitions."""
    body = request.json
    return json.dumps([body.get("system", body["messages"][0]), body["tools"]])


async def test_compact_summarises_with_no_tools_and_edit_needs_a_new_read_of_a_file_it_dropped(
    mocks: list[MockModelServer], store: SessionFiles, workspace: Path
) -> None:
    (workspace / "old.txt").write_text("old content\n")
    for n in range(1, 5):  # f1 is big, the others small: re-attaching three of them still saves room
        (workspace / f"f{n}.txt").write_text(big(f"f{n}", 100 if n == 1 else 5))
    steps = [read("old.txt"), read("f1.txt"), read("f2.txt"), read("f3.txt"), read("f4.txt"), {"text": "Read all."}]
    steps += [edit("old.txt", "old", "new"), read("old.txt"), edit("old.txt", "old", "new")]
    steps += [edit("f4.txt", "f4 line 0:", "F4 line 0:"), {"text": "Edited."}]
    mock = start(mocks, {"steps": steps, "no_tools": {"text": SUMMARY}})
    chat = chat_on(mock, store, workspace)
    events = Events(chat)

    assert await chat.send("Read the files") == "end_turn"
    assert await chat.compact("the edits to old.txt")

    [summary_request] = [r for r in mock.requests if not r.json.get("tools")]
    assert summary_request.json["system"][0]["text"] == SUMMARY_SYSTEM and summary_request.step is None
    [instruction] = summary_request.json["messages"]
    text = instruction["content"][0]["text"]
    assert all(f"## {section}" in text for section in SECTIONS) and "the edits to old.txt" in text
    assert "f1 line 9" in text and "tool_use" not in json.dumps(instruction)  # the session as plain text
    [done] = events.of(Compacted)
    assert done.trigger == "manual" and done.summary == SUMMARY and done.kept == 1
    assert [Path(p).name for p in done.reattached] == ["f4.txt", "f3.txt", "f2.txt"]
    assert sorted(Path(p).name for p in done.forgotten) == ["f1.txt", "old.txt"]

    assert await chat.send("Now edit old.txt and f4.txt") == "end_turn"
    after = [r for r in mock.requests if r.json.get("tools")][6:]
    first = after[0].json["messages"]
    assert SUMMARY in first[0]["content"][0]["text"] and "Read the files" in first[0]["content"][0]["text"]
    reattached = [b for b in first[1]["content"] if b["type"] == "tool_use"]
    assert [b["input"]["file_path"] for b in reattached] == [str(workspace / f"f{n}.txt") for n in (4, 3, 2)]
    assert "f4 line 4" in results(after[0])[reattached[0]["id"]]  # re-attached as a Read result
    assert prefix(after[0]) == prefix(mock.requests[0])  # the prompt cache's prefix is untouched

    calls = [(e.name, e.is_error, e.result.text()) for e in events.of(ToolCallFinished)][5:]
    assert [(name, is_error) for name, is_error, _ in calls] == [
        ("Edit", True),  # old.txt left the context with the summary: a new Read first
        ("Read", False),
        ("Edit", False),
        ("Edit", False),  # f4.txt was re-attached: still read
    ]
    assert "Read" in calls[0][2] and "old.txt" in calls[0][2]
    assert (workspace / "old.txt").read_text() == "new content\n"
    assert (workspace / "f4.txt").read_text().startswith("F4 line 0:")
    assert events.of(ErrorEvent) == []
    await chat.aclose()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_prompt_too_long_compacts_and_sends_again_with_the_same_prefix(
    mocks: list[MockModelServer], store: SessionFiles, workspace: Path, provider: str
) -> None:
    for n in range(1, 5):
        (workspace / f"f{n}.txt").write_text(big(f"f{n}"))
    steps = [read(f"f{n}.txt") for n in range(1, 5)] + [{"text": "All four read."}]
    probe = start(mocks, {"steps": [{"text": "ok"}]})
    bare = chat_on(probe, store, workspace, provider=provider)
    # The prefix, and room for about two of the files (and for the request's options, which the mock counts with
    # the body but the estimate leaves out: the OpenAI request asks for usage).
    window = bare.context_estimate() + 4_100
    await bare.aclose()
    mock = start(mocks, {"steps": steps, "no_tools": {"text": SUMMARY}, "context_window": window})
    # The client believes in a bigger window: only the API's own error makes it compact.
    chat = chat_on(mock, store, workspace, provider=provider, context_window=10 * window)
    events = Events(chat)

    assert await chat.send("Read f1 to f4") == "end_turn"

    refusals = [r for r in mock.requests if r.status == 400]
    words = (
        f"prompt is too long: {{}} tokens > {window} maximum"
        if provider == "anthropic"
        else (
            f"This model's maximum context length is {window} tokens. However, your messages resulted in {{}} tokens."
        )
    )
    before, after = words.split("{}")
    assert refusals and all((r.rejection or "").startswith(before) and after in (r.rejection or "") for r in refusals)
    refused = refusals[0]
    compactions = events.of(Compacted)  # a refusal compacts once, and clears if it is refused again
    assert compactions and {c.trigger for c in compactions} == {"overflow"}
    assert all(c.tokens_after < c.tokens_before for c in compactions)
    retried = mock.requests[refused.index + 2]  # after the summary request
    assert retried.status == 200 and prefix(retried) == prefix(refused) == prefix(mock.requests[0])
    assert chat.messages[-1].text() == "All four read."
    assert events.of(ContextCleared) == [] and events.of(ErrorEvent) == []
    await chat.aclose()


async def test_a_failed_summary_is_said_and_clearing_makes_the_room(
    mocks: list[MockModelServer], store: SessionFiles, workspace: Path
) -> None:
    for n in range(1, 6):
        (workspace / f"f{n}.txt").write_text(big(f"f{n}"))
    steps = [read(f"f{n}.txt") for n in range(1, 6)] + [{"text": "Read them."}]
    probe = start(mocks, {"steps": [{"text": "ok"}]})
    bare = chat_on(probe, store, workspace)
    window = bare.context_estimate() + 4_000
    await bare.aclose()
    mock = start(
        mocks, {"steps": steps, "no_tools": {"error": {"status": 500, "message": "boom"}}, "context_window": window}
    )
    chat = chat_on(mock, store, workspace, context_window=10 * window)
    events = Events(chat)

    assert await chat.send("Read f1 to f5") == "end_turn"

    failed = events.of(CompactionFailed)
    assert failed and "The summary request failed" in failed[0].message and "cleared instead" in failed[0].message
    assert events.of(ContextCleared) and events.of(Compacted) == [] and events.of(ErrorEvent) == []
    assert chat.messages[-1].text() == "Read them."
    last = mock.requests[-1]
    assert last.status == 200 and any("stored as out-" in text for text in results(last).values())
    await chat.aclose()


async def test_usage_reports_context_and_cost_per_request(
    mocks: list[MockModelServer], store: SessionFiles, workspace: Path
) -> None:
    mock = start(mocks, {"steps": [read("a.txt"), {"text": "Done."}]})
    (workspace / "a.txt").write_text("a\n")
    chat = chat_on(mock, store, workspace, context_window=50_000)
    events = Events(chat)
    assert await chat.send("read a") == "end_turn"
    first, second = events.of(UsageReport)
    assert first.context_window == second.context_window == 50_000
    assert first.cost_usd is None and second.total_cost_usd is None  # mock-model has no known price
    assert first.context_tokens == (
        first.usage.input_tokens + first.usage.cache_read_input_tokens + first.usage.cache_creation_input_tokens
    )
    assert second.usage.cache_read_input_tokens > 0  # the same prefix: a cache read on the mock
    assert second.total_usage == first.usage.add(second.usage)
    await chat.aclose()


async def test_resume_starts_compacted_and_rewind_before_the_compaction_restores_the_full_conversation(
    mocks: list[MockModelServer], store: SessionFiles, workspace: Path
) -> None:
    (workspace / "a.txt").write_text(big("a", 10))
    (workspace / "b.txt").write_text(big("b", 10))
    steps = [read("a.txt"), {"text": "Read a."}, read("b.txt"), {"text": "Read b."}, {"text": "Third."}]
    mock = start(mocks, {"steps": steps, "no_tools": {"text": SUMMARY}})
    chat = chat_on(mock, store, workspace)
    assert await chat.send("read a") == "end_turn"
    assert await chat.send("read b") == "end_turn"
    full = list(chat.messages)
    assert await chat.compact()
    compacted = list(chat.messages)
    assert SUMMARY in compacted[0].text() and len(compacted) < len(full)
    checkpoints = chat.runtime.checkpoints
    assert checkpoints is not None
    turn_two = next(c.id for c in checkpoints.checkpoints() if c.turn == 2 and c.kind == "turn")
    session = chat.id
    await chat.aclose()

    resumed = chat_on(mock, store, workspace, resume=session)
    assert resumed.messages == compacted  # a resume goes on from the summary
    assert await resumed.send("third") == "end_turn"
    resumed_checkpoints = resumed.runtime.checkpoints
    assert resumed_checkpoints is not None
    resumed_checkpoints.restore(turn_two, what="conversation")
    reload_conversation(resumed, store.transcript_path(session))
    # Back to before turn 2's message: turn 1 in full, its file contents verbatim, no summary.
    assert resumed.messages == full[:4]
    assert any(isinstance(b, ToolResult) and "a line 9" in b.text() for m in resumed.messages for b in m.content)
    assert not any(
        isinstance(b, ToolUse) and b.id.startswith("toolu_compact") for m in resumed.messages for b in m.content
    )
    await resumed.aclose()


async def test_an_interrupted_summary_leaves_the_conversation_as_it_was(
    mocks: list[MockModelServer], store: SessionFiles, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    steps = [read("a.txt"), {"text": "Read a."}, {"text": "Again."}]
    mock = start(mocks, {"steps": steps, "no_tools": {"text": "## Goal", "hang": True}})
    chat = chat_on(mock, store, workspace)
    events = Events(chat)
    assert await chat.send("read a") == "end_turn"
    assert await chat.send("again") == "end_turn"
    before = list(chat.messages)

    outcome: list[bool] = []

    async def compact() -> None:
        outcome.append(await chat.compact())

    with anyio.fail_after(30):  # without the interrupt reaching the summary request, it hangs here
        async with anyio.create_task_group() as group:
            group.start_soon(compact)
            assert await anyio.to_thread.run_sync(mock.wait_until_hanging)
            assert chat.interrupt()

    assert outcome == [False] and chat.messages == before and not chat.busy
    [failed] = events.of(CompactionFailed)
    assert "interrupted" in failed.message and failed.trigger == "manual"
    await chat.aclose()
