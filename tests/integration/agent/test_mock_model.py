"""The mock model's own promises: it rejects what the real APIs reject, records requests, serves scripts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from toolgate.mockmodel import MockModelServer

USE = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


def anthropic(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "stream": True, "messages": list(messages)}


def openai(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "stream": True, "messages": list(messages)}


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        (
            "/v1/messages",
            anthropic({"role": "user", "content": "hi"}, {"role": "assistant", "content": [USE]}),
            "never answered",
        ),
        (
            "/v1/messages",
            anthropic(
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [USE]},
                {"role": "user", "content": [{"type": "text", "text": "no result"}]},
            ),
            "have no tool_result",
        ),
        (
            "/v1/messages",
            anthropic(
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [USE]},
                {"role": "user", "content": [{"type": "text", "text": "first"}, RESULT]},
            ),
            "must come before",
        ),
        ("/v1/messages", anthropic({"role": "user", "content": [RESULT]}), "answer no tool_use"),
        ("/v1/messages", anthropic({"role": "user", "content": "a"}, {"role": "user", "content": "b"}), "alternate"),
        (
            "/v1/chat/completions",
            openai(
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}],
                },
                {"role": "user", "content": "skip it"},
            ),
            "must be followed by tool messages",
        ),
        ("/v1/chat/completions", openai({"role": "tool", "tool_call_id": "c9", "content": "x"}), "must answer"),
    ],
)
def test_broken_pairing_is_rejected_like_the_real_apis(path: str, body: dict[str, Any], words: str) -> None:
    with MockModelServer([{"text": "never sent"}]) as mock:
        response = httpx2.post(mock.url + path, json=body)
        assert response.status_code == 400
        assert words in json.dumps(response.json())
        assert mock.steps_left == 1  # a rejected request consumes no step
        [recorded] = mock.requests
        assert recorded.status == 400 and words in (recorded.rejection or "")


def test_an_exhausted_script_says_so() -> None:
    with MockModelServer([]) as mock:
        response = httpx2.post(mock.url + "/v1/messages", json=anthropic({"role": "user", "content": "hi"}))
        assert response.status_code == 400 and "no step left" in response.text


def test_after_the_last_step_the_after_last_step_answers_every_request() -> None:
    script = {"steps": [{"text": "first"}], "after_last": {"text": "The script is over.", "chunk_chars": 64}}
    with MockModelServer(script) as mock:
        bodies = []
        for _ in range(3):
            with httpx2.stream(
                "POST", mock.url + "/v1/messages", json=anthropic({"role": "user", "content": "hi"})
            ) as r:
                assert r.status_code == 200
                bodies.append(r.read().decode())
        assert '"text": "first"' in bodies[0]
        assert all("The script is over." in body for body in bodies[1:]), bodies
        assert mock.steps_left == 0
        assert [r.step for r in mock.requests] == [0, None, None]


def test_runs_as_a_program_and_records_requests(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"steps": [{"text": "Hello from the script."}]}))
    record = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "toolgate.mockmodel", "--script", str(script), "--record", str(record)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        url = line.split()[-1]
        with httpx2.stream("POST", url + "/v1/chat/completions", json=openai({"role": "user", "content": "hi"})) as r:
            body = r.read().decode()
        assert '"content": "Hello fr"' in body and body.rstrip().endswith("data: [DONE]")
        listed = httpx2.get(url + "/_mock/requests").json()
        assert [(r["api"], r["status"]) for r in listed] == [("openai", 200)]
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert json.loads(record.read_text().splitlines()[0])["body"]["messages"][0]["content"] == "hi"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_a_request_over_the_window_gets_each_apis_own_error_and_uses_no_step() -> None:
    long = {"role": "user", "content": "x" * 4_000}  # about 1,000 tokens of body
    with MockModelServer({"steps": [{"text": "fits"}], "context_window": 500}) as mock:
        body = json.dumps(anthropic(long)).encode()
        refused = httpx2.post(f"{mock.url}/v1/messages", content=body, headers={"content-type": "application/json"})
        assert refused.status_code == 400 and refused.json() == {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {-(-len(body) // 4)} tokens > 500 maximum",
            },
        }
        error = httpx2.post(f"{mock.openai_url}/chat/completions", json=openai(long)).json()["error"]
        assert (error["type"], error["code"], error["param"]) == (
            "invalid_request_error",
            "context_length_exceeded",
            "messages",
        )
        assert error["message"].startswith("This model's maximum context length is 500 tokens. However, your messages")
        assert mock.steps_left == 1
        assert (
            httpx2.post(f"{mock.url}/v1/messages", json=anthropic({"role": "user", "content": "hi"})).status_code == 200
        )
