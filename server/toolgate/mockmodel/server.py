"""A scripted model server on 127.0.0.1 that speaks both streaming APIs and records every request.

    POST /v1/messages            Anthropic Messages, streaming (SSE)
    POST /v1/chat/completions    OpenAI Chat Completions, streaming (SSE)   (also without the /v1)
    GET  /v1/models              the script's `models`, in the Anthropic shape (with an anthropic-version
                                 header) or the OpenAI one (also without the /v1)
    GET  /_mock/requests         what was recorded so far, as JSON

Each accepted request consumes the next scripted step, whichever API it came in through (then the script's
`after_last` step, if it has one, answers every further request). A request that breaks the pairing rules (see
`pairing.py`) gets a 400 like the real APIs give, and consumes nothing. So does a request over the script's
`context_window`: its size is estimated as one token per 4 characters of the request body (the estimate the
agent loop uses too), and the error has the API's real shape (`window_error`), and so does an OpenAI request that
carries `stream_options` when the script refuses it (`refuses_stream_options`).
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from toolgate.mockmodel.formats import (
    Frame,
    Stall,
    Usage,
    anthropic_error_body,
    anthropic_frames,
    openai_error_body,
    openai_frames,
    unknown_parameter_refusal,
)
from toolgate.mockmodel.pairing import check_anthropic, check_openai
from toolgate.mockmodel.script import ErrorSpec, Script, Step, load_script
from toolgate.text.tokens import estimate_tokens

Api = Literal["anthropic", "openai"]
HOST = "127.0.0.1"


@dataclass
class RecordedRequest:
    index: int
    api: Api
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any
    received_at: float  # time.perf_counter() once the body was read
    status: int = 0
    rejection: str | None = None  # why a 400 was given
    step: int | None = None  # which scripted step answered it
    finished_at: float | None = None  # perf_counter() after the last byte was written
    disconnected: bool = False  # the client went away before the response was complete
    lane: str | None = None  # the script lane that answered it (see Script.lanes)

    def summary(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "api": self.api,
            "path": self.path,
            "status": self.status,
            "rejection": self.rejection,
            "step": self.step,
            "disconnected": self.disconnected,
            "lane": self.lane,
            "body": self.json,
        }


def _system_text(body: Any) -> str:
    """The request's system prompt, in either API's shape."""
    if not isinstance(body, dict):
        return ""
    system = body.get("system")
    if system is None:  # OpenAI: the first message, when it is the system's
        messages = body.get("messages") or [{}]
        system = (
            messages[0].get("content")
            if isinstance(messages[0], dict)
            and messages[0].get("role")
            in (
                "system",
                "developer",
            )
            else ""
        )
    if isinstance(system, list):
        return "".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in system)
    return str(system or "")


def _lane_of(state: _State, body: Any) -> tuple[str, list[Step]] | None:
    if not state.lanes:
        return None
    system = _system_text(body)
    return next(((key, steps) for key, steps in state.lanes.items() if key in system), None)


@dataclass
class _State:
    script: Script
    next_step: int = 0
    requests: list[RecordedRequest] = field(default_factory=list)
    prefixes: set[str] = field(default_factory=set)
    hanging: int = 0
    lock: threading.Condition = field(default_factory=threading.Condition)
    released: threading.Event = field(default_factory=threading.Event)
    on_record: Callable[[RecordedRequest], None] | None = None
    lanes: dict[str, list[Step]] = field(default_factory=dict)  # what is left of the script's lanes

    def __post_init__(self) -> None:
        self.lanes = {key: list(steps) for key, steps in self.script.lanes.items()}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: _State, port: int) -> None:
        self.state = state
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__((HOST, port), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Each SSE frame is its own small write: without this, Nagle's algorithm meets the client's delayed
        # ACK and every reply gains ~40 ms that no real API has.
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the recorder is the log
        return None

    # --- plumbing ------------------------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _client_gone(self) -> bool:
        readable, _, _ = select.select([self.connection], [], [], 0)
        if not readable:
            return False
        try:
            return bool(self.connection.recv(1, socket.MSG_PEEK) == b"")
        except OSError:
            return True

    # --- routes --------------------------------------------------------------------------------------
    def do_GET(self) -> None:
        state = self.server.state
        if self.path.rstrip("/") == "/_mock/requests":
            with state.lock:
                payload = [r.summary() for r in state.requests]
            self._send_json(200, payload)
            return
        if self.path.split("?")[0].rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, _models_page(state.script.models, anthropic="anthropic-version" in self.headers))
            return
        self._send_json(404, {"error": {"type": "not_found_error", "message": f"nothing at {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        received = time.perf_counter()
        path = self.path.split("?")[0].rstrip("/")
        api: Api
        if path.endswith("/messages"):
            api = "anthropic"
        elif path.endswith("/chat/completions"):
            api = "openai"
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": f"nothing at {self.path}"}})
            return
        try:
            parsed: Any = json.loads(body or b"null")
        except ValueError:
            parsed = None
        state = self.server.state
        with state.lock:
            record = RecordedRequest(
                index=len(state.requests),
                api=api,
                path=path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                json=parsed,
                received_at=received,
            )
            state.requests.append(record)
            problem = (check_anthropic if api == "anthropic" else check_openai)(parsed)
            if problem is None and not (isinstance(parsed, dict) and parsed.get("stream") is True):
                problem = "this mock only answers streaming requests (stream: true)"
            refusal = state.script.refuses_stream_options
            if problem is None and refusal is not None and api == "openai" and "stream_options" in parsed:
                problem = f"stream_options refused with HTTP {refusal}, as the script asks"
            else:
                refusal = None
            step: Step | None = None
            over = window_error(api, body, state.script.context_window) if problem is None else None
            lane = _lane_of(state, parsed) if problem is None and over is None else None
            if over is not None:
                problem = over.message
            elif problem is None and state.script.no_tools is not None and not _offers_tools(parsed):
                step = state.script.no_tools
            elif lane is not None:
                key, steps = lane
                if steps:
                    step = steps.pop(0)
                    record.lane = key
                else:
                    problem = f"the mock's lane {key!r} has no step left for request {record.index}"
            elif problem is None:
                if state.next_step < len(state.script.steps):
                    record.step = state.next_step
                    step = state.script.steps[state.next_step]
                    state.next_step += 1
                elif state.script.after_last is not None:
                    step = state.script.after_last
                else:
                    problem = f"the mock's script has no step left for request {record.index}"
            state.lock.notify_all()
        try:
            if refusal is not None:
                record.rejection, record.status = problem, refusal
                self._send_json(refusal, unknown_parameter_refusal(refusal, "stream_options", parsed["stream_options"]))
            elif over is not None:
                record.rejection = problem
                self._reject(api, record, 400, over.message, over)
            elif step is None:
                record.rejection = problem
                self._reject(api, record, 400, problem or "rejected")
            elif step.error is not None:
                self._reject(api, record, step.error.status, step.error.message, step.error)
            else:
                self._stream(api, record, step)
        except (BrokenPipeError, ConnectionResetError):
            record.disconnected = True
            self.close_connection = True
        finally:
            record.finished_at = time.perf_counter()
            with state.lock:
                state.lock.notify_all()
            if state.on_record is not None:
                state.on_record(record)

    def _reject(
        self, api: Api, record: RecordedRequest, status: int, message: str, spec: ErrorSpec | None = None
    ) -> None:
        spec = spec or ErrorSpec(status=status, message=message)
        record.status = spec.status
        headers = {"retry-after": str(spec.retry_after)} if spec.retry_after is not None else {}
        body = anthropic_error_body(spec) if api == "anthropic" else openai_error_body(spec)
        self._send_json(spec.status, body, headers)

    def _usage(self, api: Api, body: dict[str, Any]) -> Usage:
        """Fake but consistent token counts; a repeated system+tools prefix counts as a cache read.

        Each API's own shape: Anthropic's `input_tokens` leaves the cached prefix out (it is counted as a cache
        write or read beside it); OpenAI's `prompt_tokens` is the whole prompt, its cached part included."""
        size = len(json.dumps(body.get("messages"))) // 4
        system = body.get("system") if api == "anthropic" else (body.get("messages") or [None])[0]
        prefix = json.dumps([body.get("tools"), system], sort_keys=False)
        tokens = len(prefix) // 4
        state = self.server.state
        with state.lock:
            seen = prefix in state.prefixes
            state.prefixes.add(prefix)
        if api == "openai":  # OpenAI caches without being asked and reports no cache writes
            return Usage(input_tokens=size + len(json.dumps(body.get("tools"))) // 4, cache_read=tokens if seen else 0)
        return Usage(input_tokens=size, cache_read=tokens if seen else 0, cache_creation=0 if seen else tokens)

    def _stream(self, api: Api, record: RecordedRequest, step: Step) -> None:
        body = record.json if isinstance(record.json, dict) else {}
        model = str(body.get("model", "mock-model"))
        prefix = "toolu" if api == "anthropic" else "call"
        ids = [u.id or f"{prefix}_mock_{record.index}_{i}" for i, u in enumerate(step.tool_uses)]
        frames: list[Frame]
        if api == "anthropic":
            frames = anthropic_frames(step, ids, model, self._usage(api, body))
        else:
            asked = bool((body.get("stream_options") or {}).get("include_usage"))
            wants_usage = asked and self.server.state.script.reports_usage
            frames = openai_frames(step, ids, model, self._usage(api, body) if wants_usage else None)
        record.status = 200
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for frame in frames:
            if isinstance(frame, Stall):
                if not self._stall():
                    record.disconnected = True
                    self.close_connection = True
                    return
                continue
            self._chunk(frame)
            if step.delay:
                time.sleep(step.delay)
        self.wfile.write(b"0\r\n\r\n")
        if step.stream_error is not None:
            self.close_connection = True

    def _stall(self) -> bool:
        """Wait until released (True) or until the client disconnects (False)."""
        state = self.server.state
        with state.lock:
            state.hanging += 1
            state.lock.notify_all()
        try:
            while not state.released.is_set():
                readable, _, _ = select.select([self.connection], [], [], 0.02)
                if readable and self._client_gone():
                    return False
            return True
        finally:
            with state.lock:
                state.hanging -= 1
                state.lock.notify_all()


def _models_page(models: list[str], *, anthropic: bool) -> dict[str, Any]:
    if anthropic:
        data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in models]
        last = models[-1] if models else None
        return {"data": data, "has_more": False, "first_id": models[0] if models else None, "last_id": last}
    return {"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "mock"} for m in models]}


def _offers_tools(body: Any) -> bool:
    return isinstance(body, dict) and bool(body.get("tools"))


def window_error(api: Api, body: bytes, window: int | None) -> ErrorSpec | None:
    """The API's own refusal of a request over `window` tokens, or None when it fits."""
    if window is None:
        return None
    tokens = estimate_tokens(body.decode("utf-8", errors="replace"))
    if tokens <= window:
        return None
    if api == "anthropic":
        return ErrorSpec(status=400, message=f"prompt is too long: {tokens} tokens > {window} maximum")
    return ErrorSpec(
        status=400,
        type="context_length_exceeded",
        message=f"This model's maximum context length is {window} tokens. However, your messages resulted in "
        f"{tokens} tokens. Please reduce the length of the messages.",
    )


class MockModelServer:
    """Run it with `with MockModelServer(steps) as mock:`; point an SDK at `mock.url` (OpenAI: `mock.openai_url`)."""

    def __init__(
        self,
        script: Script | list[Step] | list[dict[str, Any]] | dict[str, Any],
        *,
        port: int = 0,
        on_record: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        self._state = _State(script=load_script(script), on_record=on_record)
        self._server = _Server(self._state, port)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> MockModelServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="mock-model", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.released.set()
        self._server.shutdown()
        with self._server.sockets_lock:
            for sock in list(self._server.open_sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> MockModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- for tests -----------------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def accepted(self) -> list[RecordedRequest]:
        """The requests that passed the checks (each consumed a step)."""
        return [r for r in self.requests if r.step is not None]

    @property
    def steps_left(self) -> int:
        with self._state.lock:
            return len(self._state.script.steps) - self._state.next_step

    def add_steps(self, steps: list[Step] | list[dict[str, Any]]) -> None:
        more = load_script(steps).steps
        with self._state.lock:
            self._state.script.steps.extend(more)

    def release(self) -> None:
        """Let hanging streams finish normally (and every later hang pass straight through)."""
        self._state.released.set()

    def wait_for(self, condition: Callable[[MockModelServer], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._state.lock:
            while not condition(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._state.lock.wait(remaining)
        return True

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        return self.wait_for(lambda m: len(m._state.requests) >= count, timeout)

    def wait_until_hanging(self, timeout: float = 10.0) -> bool:
        return self.wait_for(lambda m: m._state.hanging > 0, timeout)
