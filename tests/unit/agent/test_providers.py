"""Provider pieces that need no server: config secrecy, argument parsing, error wording, request shapes."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from toolgate.agent.conversation import ChatMessage
from toolgate.agent.providers import ModelConfig
from toolgate.agent.providers.anthropic import build_params
from toolgate.agent.providers.base import ModelRequest, describe_status, parse_tool_input, retry_after_seconds
from toolgate.agent.providers.openai import messages_param
from toolgate.core.tool import ToolDefinition


def test_the_api_key_is_never_serialised() -> None:
    config = ModelConfig(api_key=SecretStr("sk-very-secret"))
    assert "sk-very-secret" not in config.model_dump_json() + repr(config) + str(config.model_dump())


@pytest.mark.parametrize(
    ("raw", "cut_off", "value", "problem"),
    [
        ("", False, {}, None),
        ('{"a": 1}', False, {"a": 1}, None),
        ('{"a": ', True, '{"a": ', "cut off at the output token limit"),
        ("{a: 1}", False, "{a: 1}", "not valid JSON"),
        ("[1]", False, [1], "must be a JSON object"),
    ],
)
def test_tool_arguments_are_parsed_strictly(raw: str, cut_off: bool, value: object, problem: str | None) -> None:
    parsed, why = parse_tool_input(raw, cut_off=cut_off)
    assert parsed == value
    assert (why is None) if problem is None else (problem in (why or ""))


@pytest.mark.parametrize(
    ("status", "api_type", "message", "kind"),
    [
        (429, None, "", "rate_limit"),
        (529, None, "", "overloaded"),
        (None, "overloaded_error", "", "overloaded"),
        (401, None, "", "auth"),
        (403, None, "", "auth"),
        (400, None, "prompt is too long: 300000 tokens > 200000 maximum", "context_too_long"),
        (400, "context_length_exceeded", "", "context_too_long"),
        (413, None, "", "context_too_long"),
        (404, None, "", "not_found"),
        (502, None, "", "server"),
        (422, None, "bad field", "bad_request"),
    ],
)
def test_errors_are_classified(status: int | None, api_type: str | None, message: str, kind: str) -> None:
    error = describe_status("anthropic", status, api_type, message, "https://api.example", "m")
    assert error.kind == kind
    assert error.retryable == (kind in ("rate_limit", "overloaded", "server"))


def test_retry_after_headers() -> None:
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after_seconds({"retry-after": "100000"}) is None  # not believable: use our own backoff


def conversation() -> list[ChatMessage]:
    return [
        ChatMessage.model_validate(m)
        for m in (
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}},
                    {"type": "tool_use", "id": "t2", "name": "Read", "input": "{broken"},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "1\tx"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "bad", "is_error": True},
                    {"type": "text", "text": "and hurry"},
                ],
            },
        )
    ]


def test_anthropic_request_shape() -> None:
    tools = [ToolDefinition(name=n, description=n, input_schema={"type": "object"}) for n in ("A", "B")]
    params = build_params(ModelRequest(system="S", tools=tools, messages=conversation(), max_tokens=9), "m")
    assert params["system"] == [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}]
    assert [t.get("cache_control") for t in params["tools"]] == [None, {"type": "ephemeral"}]
    assistant = params["messages"][1]["content"]
    assert assistant[2]["input"] == {}  # arguments that were not JSON go back as an empty object
    results = params["messages"][2]["content"]
    assert "is_error" not in results[0] and results[1]["is_error"] is True
    assert results[2] == {"type": "text", "text": "and hurry", "cache_control": {"type": "ephemeral"}}


def test_openai_conversion() -> None:
    messages = messages_param("S", conversation())
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert messages[2]["tool_calls"][1]["function"]["arguments"] == "{broken"
    assert messages[3] == {"role": "tool", "tool_call_id": "t1", "content": "1\tx"}
    assert messages[5] == {"role": "user", "content": "and hurry"}
