"""The JSON-RPC endpoint: routing, our own requests and their answers, cancellation, ids, shutdown."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from toolgate.sidecar.endpoint import Endpoint
from toolgate.sidecar.rpc_errors import ErrorAnswer, InvalidParamsError, InvalidRequestError


class Collect:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    def write(self, data: bytes) -> None:
        header, _, body = data.partition(b"\r\n\r\n")
        assert header.startswith(b"Content-Length: %d\r\n" % len(body))
        self.messages.append(json.loads(body))
        self.arrived.set()

    async def next(self) -> dict[str, Any]:
        async with asyncio.timeout(5):
            while not self.messages:
                self.arrived.clear()
                await self.arrived.wait()
        return self.messages.pop(0)


def message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


@pytest.fixture
def out() -> Collect:
    return Collect()


@pytest.fixture
def endpoint(out: Collect) -> Endpoint:
    endpoint = Endpoint()
    endpoint.set_writer(out)
    return endpoint


async def test_a_request_gets_its_handler_s_result_and_an_rpc_error_its_code(endpoint: Endpoint, out: Collect) -> None:
    async def echo(params: Any) -> Any:
        if params.get("bad"):
            raise InvalidParamsError("`bad` is not allowed", data={"field": "bad"})
        return {"got": params}

    endpoint.on_request("echo", echo)
    endpoint.receive(message(id=1, method="echo", params={"a": 1}))
    assert await out.next() == {"jsonrpc": "2.0", "id": 1, "result": {"got": {"a": 1}}}
    endpoint.receive(message(id="two", method="echo", params={"bad": True}))
    answer = await out.next()
    assert answer["id"] == "two"
    assert answer["error"] == {"code": -32602, "message": "`bad` is not allowed", "data": {"field": "bad"}}


async def test_an_unknown_method_is_answered_not_found(endpoint: Endpoint, out: Collect) -> None:
    endpoint.receive(message(id=3, method="nope"))
    answer = await out.next()
    assert answer["id"] == 3 and answer["error"]["code"] == -32601 and "'nope'" in answer["error"]["message"]


async def test_cancel_request_cancels_a_running_handler_and_it_is_answered_cancelled(
    endpoint: Endpoint, out: Collect
) -> None:
    started = asyncio.Event()

    async def forever(_params: Any) -> Any:
        started.set()
        await asyncio.Event().wait()

    endpoint.on_request("forever", forever)
    endpoint.receive(message(id="f", method="forever"))
    await started.wait()
    endpoint.receive(message(method="$/cancelRequest", params={"id": "f"}))
    answer = await out.next()
    assert answer["id"] == "f" and answer["error"]["code"] == -32800


async def test_an_id_still_running_cannot_be_reused(endpoint: Endpoint, out: Collect) -> None:
    release = asyncio.Event()

    async def wait(_params: Any) -> Any:
        await release.wait()
        return "done"

    endpoint.on_request("wait", wait)
    endpoint.receive(message(id=9, method="wait"))
    endpoint.receive(message(id=9, method="wait"))
    refused = await out.next()
    assert refused["id"] == 9 and refused["error"]["code"] == -32600 and "fresh id" in refused["error"]["message"]
    release.set()
    assert await out.next() == {"jsonrpc": "2.0", "id": 9, "result": "done"}


async def test_after_shutdown_every_request_is_refused_with_the_reason(endpoint: Endpoint, out: Collect) -> None:
    endpoint.on_request("ping", lambda _params: {})
    endpoint.refusing = "The server is shutting down."
    endpoint.receive(message(id=1, method="ping"))
    answer = await out.next()
    assert answer["error"] == {"code": -32600, "message": "The server is shutting down."}


async def test_our_request_ends_with_the_client_s_result_or_error(endpoint: Endpoint, out: Collect) -> None:
    first = endpoint.send_request("ask", {"q": 1}, "q1")
    second = endpoint.send_request("ask", {"q": 2}, "q2")
    assert [await out.next(), await out.next()] == [
        {"jsonrpc": "2.0", "id": "q1", "method": "ask", "params": {"q": 1}},
        {"jsonrpc": "2.0", "id": "q2", "method": "ask", "params": {"q": 2}},
    ]
    endpoint.receive(message(id="q2", error={"code": 7, "message": "no thanks"}))
    endpoint.receive(message(id="q1", result={"yes": True}))
    assert await first == {"yes": True}
    with pytest.raises(ErrorAnswer, match="no thanks") as raised:
        await second
    assert raised.value.code == 7


async def test_an_unreadable_answer_still_ends_our_request(endpoint: Endpoint, out: Collect) -> None:
    pending = endpoint.send_request("ask", {}, "q")
    await out.next()
    endpoint.receive(message(id="q", result=1, error={"code": 1, "message": "x"}))
    with pytest.raises(InvalidRequestError, match="both"):
        await pending


async def test_a_forgotten_request_ignores_its_late_answer(endpoint: Endpoint, out: Collect) -> None:
    pending = endpoint.send_request("ask", {}, "late")
    await out.next()
    endpoint.forget("late")
    pending.cancel()
    endpoint.receive(message(id="late", result="too late"))  # neither raises nor answers
    assert pending.cancelled() and out.messages == []


async def test_a_notification_handler_that_raises_leaves_the_endpoint_serving(endpoint: Endpoint, out: Collect) -> None:
    seen: list[Any] = []

    def broken(params: Any) -> None:
        seen.append(params)
        raise RuntimeError("boom")

    endpoint.on_notification("note", broken)
    endpoint.on_request("ping", lambda _params: {})
    endpoint.receive(message(method="note", params={"n": 1}))
    endpoint.receive(message(method="unknown/notification"))
    endpoint.receive(message(id=1, method="ping"))
    assert seen == [{"n": 1}]
    assert await out.next() == {"jsonrpc": "2.0", "id": 1, "result": {}}  # and no answer to either notification


def test_each_notification_is_one_whole_write_from_any_thread() -> None:
    written: list[bytes] = []
    lock = threading.Lock()

    class Writer:
        def write(self, data: bytes) -> None:
            with lock:
                written.append(data)

    endpoint = Endpoint()
    endpoint.set_writer(Writer())
    threads = [
        threading.Thread(target=lambda n=n: [endpoint.notify("p", {"n": n, "i": i}) for i in range(200)])
        for n in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    bodies = [json.loads(data.partition(b"\r\n\r\n")[2]) for data in written]
    assert sorted((b["params"]["n"], b["params"]["i"]) for b in bodies) == [
        (n, i) for n in range(4) for i in range(200)
    ]


async def test_an_unexpected_exception_is_answered_in_words_without_its_traceback(
    endpoint: Endpoint, out: Collect
) -> None:
    async def broken(_params: Any) -> Any:
        return {}["x"]

    endpoint.on_request("broken", broken)
    endpoint.receive(message(id=7, method="broken"))
    assert await out.next() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": "broken failed: KeyError: 'x'"},
    }
