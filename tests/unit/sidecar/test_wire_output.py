"""What the sidecar writes is strict JSON without tracebacks, whatever a handler returned or raised."""

from __future__ import annotations

import json
from typing import Any

from lsprotocol.types import ResponseError

from toolgate.sidecar.server import ToolgateServer


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


def server_writing_to(out: Collect) -> ToolgateServer:
    server = ToolgateServer()
    server.protocol.set_writer(out)
    return server


def test_a_result_json_cannot_hold_becomes_an_internal_error() -> None:
    out = Collect()
    server_writing_to(out).protocol._send_response("r1", result={"value": float("nan")})
    [answer] = out.messages()
    assert answer["id"] == "r1" and answer["error"]["code"] == -32603 and "result" not in answer


def test_a_traceback_never_leaves_in_an_error() -> None:
    out = Collect()
    error = ResponseError(code=-32603, message="KeyError: 'x'", data={"traceback": ['File "/src/a.py", line 1\n']})
    server_writing_to(out).protocol._send_response(7, error=error)
    [answer] = out.messages()
    assert answer == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "KeyError: 'x'"}}


def test_an_error_for_no_known_id_says_id_null() -> None:
    out = Collect()
    server_writing_to(out).protocol.receive(b"not json")
    [answer] = out.messages()
    assert answer["id"] is None and answer["error"]["code"] == -32700
