"""A raw stdio client for `toolgate serve`: our own framing, no pygls, so a test can send bytes no client would.

Everything the server writes is read by a thread that holds it to the strictest reading of the base protocol:
a `Content-Length` header block, then exactly that many bytes of UTF-8 JSON that Python parses without NaN or
Infinity (and without duplicate keys). Anything else is recorded as a violation, which every test checks.
The server runs in its own process group; `close` kills the group.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

REAL_SERVER = [sys.executable, "-m", "toolgate", "serve", "--trust-workspace"]
DEADLINE = 30.0
PING = "toolgate/ping"


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def message(**members: Any) -> bytes:
    """A framed JSON-RPC message (members as given, `jsonrpc` included only when passed)."""
    return frame(json.dumps(members).encode())


def _strict_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate keys in {keys}")
    return dict(pairs)


class RawSidecar:
    def __init__(self, storage: Path, workspace: Path) -> None:
        self.stderr_path = storage.parent / "sidecar-stderr.log"
        storage.mkdir(parents=True, exist_ok=True)
        self._stderr = self.stderr_path.open("wb")
        self.process = subprocess.Popen(
            REAL_SERVER,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
            cwd=workspace,
        )
        self.violations: list[str] = []
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._ids = itertools.count(1)
        self._reader = threading.Thread(target=self._read, name="raw-sidecar-stdout", daemon=True)
        self._reader.start()
        self.initialize(storage, workspace)

    # --- writing ---------------------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        """Send a well-formed request; returns its id."""
        msg_id = f"req-{next(self._ids)}" if msg_id is None else msg_id
        members: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            members["params"] = params
        self.send(message(**members))
        return msg_id

    def initialize(self, storage: Path, workspace: Path) -> None:
        params = {
            "capabilities": {},
            "initializationOptions": {"storageDir": str(storage)},
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
        }
        answer = self.answer_to(self.request("initialize", params))
        assert "result" in answer, answer
        self.send(message(jsonrpc="2.0", method="initialized", params={}))

    # --- reading ---------------------------------------------------------------------------------------------
    def next_message(self) -> dict[str, Any]:
        try:
            item = self.messages.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(f"the sidecar wrote nothing for {DEADLINE}s; {self.state()}") from None
        if item is None:
            raise AssertionError(f"the sidecar's stdout ended; {self.state()}")
        return item

    def answer_to(self, msg_id: Any, others: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Read messages until the answer to `msg_id`; everything read before it goes to `others`."""
        while True:
            item = self.next_message()
            if item.get("id") == msg_id and "method" not in item:
                return item
            if others is not None:
                others.append(item)

    def ping(self, others: list[dict[str, Any]] | None = None) -> None:
        """The server is alive and reading: a fresh ping is answered (with an empty result)."""
        msg_id = self.request(PING)
        answer = self.answer_to(msg_id, others)
        assert answer.get("result") == {}, answer

    def state(self) -> str:
        code = self.process.poll()
        tail = self.stderr_path.read_text(errors="replace")[-3000:]
        return f"exit status {code}; violations {self.violations}; stderr ends with:\n{tail}"

    def _read(self) -> None:
        assert self.process.stdout is not None
        stream = self.process.stdout
        try:
            while True:
                length = self._read_headers(stream)
                if length is None:
                    return
                body = stream.read(length)
                if len(body) != length:
                    self.violations.append(f"stdout ended inside a message ({len(body)} of {length} bytes)")
                    return
                try:
                    value = json.loads(
                        body.decode("utf-8"), parse_constant=_strict_constant, object_pairs_hook=_no_duplicates
                    )
                except ValueError as exc:
                    self.violations.append(f"not strict JSON ({exc}): {body[:200]!r}")
                    continue
                if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
                    self.violations.append(f"not a JSON-RPC 2.0 object: {body[:200]!r}")
                    continue
                self.messages.put(value)
        finally:
            self.messages.put(None)

    def _read_headers(self, stream: Any) -> int | None:
        length: int | None = None
        while True:
            line = stream.readline()
            if not line:
                return None
            if line == b"\r\n":
                if length is None:
                    self.violations.append("a header block without Content-Length")
                return length
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value.strip())
            elif name.lower() != "content-type":
                self.violations.append(f"an unexpected header line {line!r}")

    # --- ending ----------------------------------------------------------------------------------------------
    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=DEADLINE)
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()
        self._reader.join(timeout=DEADLINE)
        self._stderr.close()
