"""What the sidecar writes is strict JSON without tracebacks, whatever a handler returned or raised."""

from __future__ import annotations

import json
from typing import Any

from toolgate.sidecar.endpoint import Endpoint


class Collect:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def messages(self) -> list[dict[str, Any]]:
        found = []
        rest = self.data
        while rest:
            header, _, rest = rest.partition(b"\r\n\r\n")
            length = int(header.split(b"\r\n")[0].split(b":")[1])
            found.append(json.loads(rest[:length], parse_constant=lambda name: 1 / 0))
            rest = rest[length:]
        return found


def endpoint_writing_to(out: Collect) -> Endpoint:
    endpoint = Endpoint()
    endpoint.set_writer(out)
    return endpoint


def request(method: str, msg_id: int | str = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}).encode()


def test_a_result_json_cannot_hold_becomes_an_internal_error() -> None:
    out = Collect()
    endpoint = endpoint_writing_to(out)
    endpoint.on_request("nan", lambda _params: {"value": float("nan")})
    endpoint.receive(request("nan", "r1"))
    [answer] = out.messages()
    assert answer["id"] == "r1" and answer["error"]["code"] == -32603 and "result" not in answer


def test_an_error_for_no_known_id_says_id_null() -> None:
    out = Collect()
    endpoint_writing_to(out).receive(b"not json")
    [answer] = out.messages()
    assert answer["id"] is None and answer["error"]["code"] == -32700
