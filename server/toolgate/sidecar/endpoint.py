"""JSON-RPC 2.0 between the sidecar and the editor: requests routed to handlers, our own requests awaited,
cancellation, and strict JSON out.

Every body has been framed by `transport` and judged by `envelope` before it gets here, so this module routes only
sound messages; what the envelope refuses is answered as the JSON-RPC 2.0 spec says (or only logged, for what
must get no answer). The LSP lifecycle (initialize, shutdown, exit) and the methods are the server's.

This is our own rather than pygls's: importing pygls means importing `lsprotocol.types` (≈ 550 attrs classes,
0.3–0.5 s), which every editor window waited for before anything worked. The framing and the envelope checks were
ours already; what is left — routing, ids and futures — is this module.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from toolgate.sidecar import envelope
from toolgate.sidecar.rpc_errors import (
    ErrorAnswer,
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
    RequestCancelledError,
    RpcError,
)
from toolgate.sidecar.transport import FramingError

logger = logging.getLogger("toolgate.sidecar")

MsgId = int | str
# A request handler gets the raw params (a JSON object, array or None) and returns a JSON value. A plain function
# is answered at once (the lifecycle's); a coroutine function runs as a task that `$/cancelRequest` can cancel.
RequestHandler = Callable[[Any], Any] | Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], object]  # what it returns is ignored

CANCEL_REQUEST = "$/cancelRequest"
_CONTENT_TYPE = b"application/vscode-jsonrpc; charset=utf-8"
_IGNORED_NAMES = 64


class Writer(Protocol):
    def write(self, data: bytes) -> None: ...


class Endpoint:
    """One connection to the editor. `receive` is called on the event loop; `notify` from any thread."""

    def __init__(self) -> None:
        self._writer: Writer | None = None
        self._requests: dict[str, RequestHandler] = {}
        self._notifications: dict[str, NotificationHandler] = {}
        self._running: dict[MsgId, asyncio.Task[Any]] = {}  # the client's requests being handled
        self._waiting: dict[MsgId, asyncio.Future[Any]] = {}  # our requests, until the client answers
        self._ignored: set[str] = set()
        # Set once the client asked to shut down: every later request is refused with these words.
        self.refusing: str | None = None

    # --- set-up ---------------------------------------------------------------------------------------------------
    def set_writer(self, writer: Writer) -> None:
        self._writer = writer

    def on_request(self, method: str, handler: RequestHandler) -> None:
        self._requests[method] = handler

    def on_notification(self, method: str, handler: NotificationHandler) -> None:
        self._notifications[method] = handler

    @property
    def busy(self) -> bool:
        """Whether a request of the client's is being handled."""
        return bool(self._running)

    # --- in ---------------------------------------------------------------------------------------------------------
    def receive(self, item: bytes | FramingError) -> None:
        """Handle one framed message (or a framing failure). Never raises: bad input is answered or logged."""
        try:
            self._receive(item)
        except Exception:
            logger.exception("handling a message failed")

    def _receive(self, item: bytes | FramingError) -> None:
        if isinstance(item, FramingError):
            self._send_error(None, envelope.PARSE_ERROR, item.reason)
            return
        decoded = envelope.decode(item)
        if isinstance(decoded, envelope.Refusal):
            logger.warning("refused a message (%d %s): %.200r", decoded.code, decoded.message, item)
            if decoded.answer:
                self._send_error(decoded.id, decoded.code, decoded.message)
            return
        if isinstance(decoded, envelope.BrokenResponse):
            self._answered(decoded.id, error=InvalidRequestError(f"The answer cannot be read: {decoded.reason}"))
            return
        data = decoded.data
        if decoded.kind == "response":
            error = data.get("error")
            if error is None:
                self._answered(data["id"], result=data.get("result"))
            else:
                self._answered(data["id"], error=ErrorAnswer(error["code"], error["message"], error.get("data")))
        elif decoded.kind == "request":
            self._request(data["id"], data["method"], data.get("params"))
        else:
            self._notification(data["method"], data.get("params"))

    def _request(self, msg_id: MsgId, method: str, params: Any) -> None:
        if self.refusing is not None:
            self._send_error(msg_id, envelope.INVALID_REQUEST, self.refusing)
            return
        if msg_id in self._running:
            text = f"The id {json.dumps(msg_id)} is already used by a request still running; use a fresh id."
            self._send_error(msg_id, envelope.INVALID_REQUEST, text)
            return
        handler = self._requests.get(method)
        if handler is None:
            logger.warning("no method %r (request %r)", method, msg_id)
            self._respond_error(msg_id, MethodNotFoundError(f"The sidecar has no method {method!r}."))
            return
        if not inspect.iscoroutinefunction(handler):
            try:
                result = handler(params)
            except Exception as exc:
                self._respond_error(msg_id, _as_rpc_error(method, exc))
            else:
                self._respond(msg_id, result)
            return
        task = asyncio.ensure_future(handler(params))
        self._running[msg_id] = task
        task.add_done_callback(lambda done: self._finished(msg_id, method, done))

    def _finished(self, msg_id: MsgId, method: str, task: asyncio.Task[Any]) -> None:
        if self._running.get(msg_id) is task:
            del self._running[msg_id]
        if task.cancelled():
            self._respond_error(msg_id, RequestCancelledError(f"{method} was cancelled before it finished."))
        elif (exc := task.exception()) is not None:
            self._respond_error(msg_id, _as_rpc_error(method, exc))
        else:
            self._respond(msg_id, task.result())

    def _notification(self, method: str, params: Any) -> None:
        if method == CANCEL_REQUEST:
            self._cancel(params)
            return
        handler = self._notifications.get(method)
        if handler is None:
            # `$/…` notifications are optional by the LSP spec; anything else unknown is logged once (the names
            # remembered are capped: a client inventing names must not grow this without end).
            if not method.startswith("$/") and method not in self._ignored and len(self._ignored) < _IGNORED_NAMES:
                self._ignored.add(method)
                logger.info("ignoring %r notifications: the sidecar does not use them", method)
            return
        try:
            handler(params)
        except Exception:
            logger.exception("handling a %r notification failed", method)

    def _cancel(self, params: Any) -> None:
        msg_id = params.get("id") if isinstance(params, dict) else None
        task = self._running.get(msg_id) if isinstance(msg_id, int | str) else None
        if task is None:
            logger.info("nothing to cancel for %r (finished already, or never sent)", msg_id)
            return
        task.cancel()  # the handler decides what cancelling means (a turn still answers every call)

    def _answered(self, msg_id: MsgId, result: Any = None, error: RpcError | None = None) -> None:
        future = self._waiting.pop(msg_id, None)
        if future is None:
            logger.warning("ignored an answer to %r, which is no request of ours still waiting", msg_id)
            return
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    # --- out --------------------------------------------------------------------------------------------------------
    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification. Safe from any thread: it only writes, and the writer is locked."""
        message: dict[str, Any] = {"jsonrpc": envelope.VERSION, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def send_request(self, method: str, params: Any, msg_id: MsgId) -> asyncio.Future[Any]:
        """Ask the client; the future ends with its answer (a result, or an `ErrorAnswer`). On the event loop."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        if not self._send({"jsonrpc": envelope.VERSION, "id": msg_id, "method": method, "params": params}):
            del self._waiting[msg_id]
            future.set_exception(InternalError(f"The {method} request could not be written as JSON."))
        return future

    def forget(self, msg_id: MsgId) -> None:
        """We no longer wait for this answer (withdrawn, or the client is gone); a late one is ignored."""
        self._waiting.pop(msg_id, None)

    def _respond(self, msg_id: MsgId, result: Any) -> None:
        if not self._send({"jsonrpc": envelope.VERSION, "id": msg_id, "result": result}):
            self._send_error(
                msg_id, InternalError.code, "The answer could not be written as JSON; see the sidecar's log."
            )

    def _respond_error(self, msg_id: MsgId | None, error: RpcError) -> None:
        if not self._send({"jsonrpc": envelope.VERSION, "id": msg_id, "error": error.wire()}):
            self._send_error(msg_id, error.code, error.message)  # its data would not serialise: the words still answer

    def _send_error(self, msg_id: MsgId | None, code: int, message: str) -> None:
        # `"id": null` when the id is unknown, as the spec asks for an error that answers no request it can name.
        self._send({"jsonrpc": envelope.VERSION, "id": msg_id, "error": {"code": code, "message": message}})

    def _send(self, message: dict[str, Any]) -> bool:
        """Write one message; False (and logged) when it cannot be written as JSON."""
        body = self._encode(message)
        if body is not None:
            self._write(body)
        return body is not None

    def _encode(self, message: dict[str, Any]) -> bytes | None:
        """Strict JSON (no NaN, no Infinity): a value JSON cannot hold never reaches the client."""
        try:
            return json.dumps(message, allow_nan=False).encode()
        except (ValueError, TypeError, RecursionError):
            logger.exception("a %s could not be written as JSON", message.get("method") or "response")
            return None

    def _write(self, body: bytes) -> None:
        if self._writer is None:
            logger.warning("no writer yet: a message was dropped")
            return
        header = b"Content-Length: %d\r\nContent-Type: %s\r\n\r\n" % (len(body), _CONTENT_TYPE)
        self._writer.write(header + body)


def _as_rpc_error(method: str, exc: BaseException) -> RpcError:
    if isinstance(exc, RpcError):
        return exc
    # A bug of ours: the traceback goes to the log, the words to the client.
    logger.error("%s failed", method, exc_info=exc)
    return InternalError(f"{method} failed: {type(exc).__name__}: {exc}")
