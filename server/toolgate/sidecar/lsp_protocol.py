"""pygls's `LanguageServerProtocol`, with the guarantees toolgate adds as overrides of its narrowest hooks.

Read against pygls 2.1.1 and lsprotocol 2025.0.0 (pyproject pins the minor). What pygls does is kept: routing,
request futures, `$/cancelRequest`, the lifecycle, capabilities, position-encoding negotiation, workspace folders,
notebook sync. What it does not do, or does in a way the editor cannot live with, is changed here, each in one
hook that tests/unit/sidecar/test_lsp_protocol.py holds (a pygls release that moves the hook fails a test):

- `receive`: every framed body is judged by `envelope` first, so pygls only sees sound messages; a duplicate
  in-flight id and a request after `shutdown` are refused with an error (pygls drops both: the client waits).
- `structure_message`: params that do not fit lsprotocol's types are refused with -32602 naming the fields
  (pygls logs them and drops the request); a text-sync notification that cannot be read fails the mirror closed.
- `handle_message`: pygls's own routing, with its test of what a message is (isinstance against runtime-checkable
  protocols, about 10 µs a message on Python 3.11) answered once per message class.
- `_send_response`, `_send_data`: no traceback on the wire (pygls puts one in an internal error's data), strict
  JSON (no NaN), `"id": null` on an error that answers no id.
- `lsp_exit`: sets the server's exit status; pygls calls `sys.exit` inside the handler.
- `_handle_cancel_notification`, `lsp_shutdown`: a request running under `interrupting` is interrupted instead of
  cancelled (pygls cancels its task, which would tear down the work it awaits); every other one as pygls does.
- text sync (`lsp_text_document__did_*`): into the one mirror, `EditorDocuments`, which applies changes by the
  LSP line rule (`text.document_sync`); pygls's `TextDocument` splits lines like `str.splitlines`.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import attrs
import cattrs
from lsprotocol import types
from lsprotocol.types import ResponseError, ResponseErrorMessage
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcMethodNotFound
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.json_rpc import RPCNotification, RPCRequest, RPCResponse
from pygls.protocol.language_server import lsp_method

from toolgate.sidecar import envelope
from toolgate.sidecar.transport import FramingError
from toolgate.sidecar.wire_model import JsonText
from toolgate.text.document_sync import Change, Position, Range

if TYPE_CHECKING:
    from toolgate.sidecar.server import ToolgateServer

logger = logging.getLogger("toolgate.sidecar")

MsgId = int | str
_SNAKE = re.compile(r"_([a-z])")
_INTERNAL_ERROR = -32603


def _raw_fields(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**{field.name: obj.get(field.name) for field in attrs.fields(cls)})


_JSON_NAMES = {int: "integer", str: "string", bool: "boolean", float: "number"}


def _strictly(kind: type[Any]) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _cls: Any) -> Any:
        if type(value) is kind or (kind is float and type(value) is int):
            return value
        raise TypeError(f"{json.dumps(value)[:40]} is not a JSON {_JSON_NAMES[kind]}")

    return structure


def wire_converter() -> cattrs.Converter:
    """pygls's converter (the `converter_factory` hook), with two changes:

    - params and results of methods lsprotocol does not know (toolgate's own) stay plain JSON: pygls would make
      namedtuples of them; the protocol models validate the JSON themselves;
    - scalars are taken as they are or refused: cattrs would make 3 of "3", 1.5 or true, and "7" of 7, so that a
      broken client's position would be applied to the mirror as a real one.
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _raw_fields)
    for kind in _JSON_NAMES:
        converter.register_structure_hook(kind, _strictly(kind))
    return converter


class _AnsweredErrors(logging.Filter):
    """pygls logs a traceback for every error a request handler raises, and for every message whose params it
    cannot read. Ours raise JsonRpcExceptions only for the client's mistakes (already answered, in words); params
    are logged by `receive`, naming the fields; a bug of ours is logged where it is caught."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        answered = str(record.msg).startswith("Exception occurred for message")
        return not (answered and isinstance(error, JsonRpcException)) and record.msg != _PYGLS_UNREADABLE


_PYGLS_UNREADABLE = "Unable to deserialize message\n%s"  # pygls 2.1.1's words, with a traceback
_PYGLS_RPC_LOGGER = logging.getLogger("pygls.protocol.json_rpc")
if not any(isinstance(f, _AnsweredErrors) for f in _PYGLS_RPC_LOGGER.filters):
    _PYGLS_RPC_LOGGER.addFilter(_AnsweredErrors())


class _Interrupting:
    """`ToolgateProtocol.interrupting`'s block (a class: a generator-based context manager costs a request more)."""

    __slots__ = ("_held", "_interrupts", "_msg_id")

    def __init__(
        self, interrupts: dict[MsgId, tuple[Callable[[], object], str]], msg_id: MsgId, held: tuple[Any, str]
    ) -> None:
        self._interrupts = interrupts
        self._msg_id = msg_id
        self._held = held

    def __enter__(self) -> None:
        self._interrupts[self._msg_id] = self._held

    def __exit__(self, *_exc: object) -> None:
        self._interrupts.pop(self._msg_id, None)


_KINDS: dict[type[Any], str] = {}


def message_kind(message: Any) -> str:
    """What pygls's `handle_message` takes `message` for: "request", "notification", "response" or "error", by the
    same tests (isinstance against its runtime-checkable protocols, which on Python 3.11 collects each protocol's
    attributes anew every time: about 10 µs a message). An attrs class sets every field in `__init__`, so all its
    instances pass the same tests: the answer is kept per class."""
    cls = type(message)
    if (kind := _KINDS.get(cls)) is not None:
        return kind
    if isinstance(message, RPCRequest):
        kind = "request"
    elif isinstance(message, RPCNotification):
        kind = "notification"
    elif isinstance(message, RPCResponse):
        kind = "response"
    else:
        kind = "error"
    if attrs.has(cls):
        _KINDS[cls] = kind
    return kind


class ToolgateProtocol(LanguageServerProtocol):
    _server: ToolgateServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The client's requests now running under `interrupting`: what cancelling each calls, and its name.
        self._interrupts: dict[MsgId, tuple[Callable[[], object], str]] = {}

    # --- in ---------------------------------------------------------------------------------------------------------
    def receive(self, item: bytes | FramingError) -> None:
        """Handle one framed message (or a framing failure). Never raises: bad input is answered or logged."""
        try:
            self._receive(item)
        except Exception:
            logger.exception("handling a message failed")

    def _receive(self, item: bytes | FramingError) -> None:
        if isinstance(item, FramingError):
            self.send_error(None, envelope.PARSE_ERROR, item.reason)
            return
        decoded = envelope.decode(item)
        if isinstance(decoded, envelope.Refusal):
            logger.warning("refused a message (%d %s): %.200r", decoded.code, decoded.message, item)
            if decoded.answer:
                self.send_error(decoded.id, decoded.code, decoded.message)
            return
        if isinstance(decoded, envelope.BrokenResponse):
            self._fail_pending(decoded.id, decoded.reason)
            return
        data = decoded.data
        if decoded.kind == "response" and data["id"] not in self._result_types:
            # Only our own requests wait for answers (pygls would log it as unknown too, but later and louder).
            logger.warning("ignored an answer to %r, which is no request of ours still waiting", data["id"])
            return
        if decoded.kind == "request":
            if (refusal := self._refusal(data["id"])) is not None:
                self.send_error(data["id"], envelope.INVALID_REQUEST, refusal)
                return
            try:  # before its params are read: a method not served is answered as that, whatever its params
                self._get_handler(data["method"])
            except JsonRpcMethodNotFound:
                logger.warning("no method %r (request %r)", data["method"], data["id"])
                self.send_error(
                    data["id"], JsonRpcMethodNotFound.CODE, f"The sidecar has no method {data['method']!r}."
                )
                return
        try:
            message = self.structure_message(data)
        except JsonRpcException as exc:
            logger.warning("could not read a %r message: %s", data.get("method"), exc.message)
            if decoded.kind == "request":
                self._send_response(data["id"], error=exc.to_response_error())
            elif decoded.kind == "response":
                self._fail_pending(data["id"], exc.message)
            else:
                self._server.documents.unreadable(data["method"], data.get("params"))
            return
        self.handle_message(message)

    def _refusal(self, msg_id: MsgId) -> str | None:
        """Why a request must be refused before it runs (pygls drops both kinds silently), or None."""
        if self._shutdown:
            return "The server is shutting down."
        if msg_id in self._request_futures and msg_id not in self._result_types:
            return f"The id {json.dumps(msg_id)} is already used by a request still running; use a fresh id."
        return None

    def handle_message(self, message: Any) -> None:
        """pygls's own (read in 2.1.1), with the kind of message found by `message_kind`."""
        if message.jsonrpc != self.VERSION:
            logger.warning("ignored a message with jsonrpc %r", message.jsonrpc)
            return
        if self._shutdown and getattr(message, "method", "") != types.EXIT:
            logger.warning("the server is shutting down: ignored a %r message", getattr(message, "method", None))
            return
        # Each handler runs in a context of its own (the request's id is set in it).
        ctx = contextvars.copy_context()
        kind = message_kind(message)
        if kind == "request":
            ctx.run(self._handle_request, message.id, message.method, message.params)
        elif kind == "notification":
            ctx.run(self._handle_notification, message.method, message.params)
        elif kind == "response":
            ctx.run(self._handle_response, message.id, message.result)
        else:
            ctx.run(self._handle_response, message.id, None, message.error)

    @property
    def busy(self) -> bool:
        """Whether a request of the client's is being handled (ours, waiting for the client, are not counted)."""
        return any(msg_id not in self._result_types for msg_id in self._request_futures)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls's own, except that params that do not fit are refused naming the fields (-32602)."""
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams as exc:
            if isinstance(cause := exc.__cause__, cattrs.ClassValidationError):
                # lsprotocol's attributes are snake_case; the client knows the fields by their wire names.
                problems = "; ".join(cattrs.transform_error(cause, path="")).replace("@ .", "@ ")
                fields = _SNAKE.sub(lambda m: m[1].upper(), problems)
                raise JsonRpcInvalidParams(message=f"Invalid params for {data.get('method')}: {fields}") from None
            raise

    def _fail_pending(self, msg_id: MsgId, reason: str) -> None:
        """An answer to one of our requests that cannot be read still ends that request, as an error."""
        future = self._request_futures.get(msg_id)
        if msg_id not in self._result_types or future is None:
            logger.warning("ignored an unreadable answer to %r (%s)", msg_id, reason)
            return
        logger.warning("the answer to %r cannot be read (%s); taking it as an error", msg_id, reason)
        self.withdraw(msg_id)
        if not future.done():
            future.set_exception(JsonRpcInvalidRequest(message=f"The answer cannot be read: {reason}"))

    def withdraw(self, msg_id: MsgId) -> None:
        """We no longer wait for the answer to our request `msg_id`; a late one is ignored. (pygls would set the
        result of a future we cancelled, which raises inside its loop.)"""
        self._request_futures.pop(msg_id, None)
        self._result_types.pop(msg_id, None)

    # --- cancellation ---------------------------------------------------------------------------------------------
    def interrupting(self, interrupt: Callable[[], object], what: str) -> _Interrupting:
        """While the current request's handler is inside this block, cancelling the request (`$/cancelRequest`, or
        `shutdown`) calls `interrupt` instead of cancelling the handler's task, so the work it awaits is not torn
        down and still answers in full. (The work as a task of its own behind `asyncio.shield` did the same, for
        a task, a future and two more turns of the event loop on every request.)"""
        # The context variable itself: pygls's `msg_id` copies the whole context to read it.
        msg_id = self._ctx_msg_id.get()
        if msg_id is None:
            raise RuntimeError("interrupting() is for a request's handler: no request is being handled here")
        return _Interrupting(self._interrupts, msg_id, (interrupt, what))

    def _interrupted(self, msg_id: MsgId) -> bool:
        """Interrupt the request `msg_id` if it runs under `interrupting`; False when it does not (cancel it)."""
        if (held := self._interrupts.get(msg_id)) is None:
            return False
        interrupt, what = held
        logger.info("%s cancelled by the client; interrupting it", what)
        interrupt()
        return True

    def _handle_cancel_notification(self, msg_id: MsgId) -> None:
        # The request stays among the running ones (its id is not free before it is answered).
        if not self._interrupted(msg_id):
            super()._handle_cancel_notification(msg_id)

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """pygls's own (every other request still running is cancelled), except that one running under
        `interrupting` is interrupted instead."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done() and not self._interrupted(msg_id):
                future.cancel()
        self._shutdown = True

    # --- lifecycle and text sync -----------------------------------------------------------------------------------
    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> None:  # type: ignore[override]  # pygls's is a generator: no user handler here
        """The status the process ends with (LSP: 0 after shutdown, else 1); the serving loop ends on it."""
        self._server.exit_status = 0 if self._shutdown else 1

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._server.documents.opened(params.text_document.uri, params.text_document.text)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        # pygls negotiated it at initialize (its workspace does not exist before): UTF-16 unless the client offered
        # another it knows.
        workspace = self._workspace
        encoding = (workspace.position_encoding if workspace else None) or types.PositionEncodingKind.Utf16
        changes = [_change(event) for event in params.content_changes]
        self._server.documents.edited(params.text_document.uri, changes, str(encoding))

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._server.documents.closed(params.text_document.uri)

    # --- out --------------------------------------------------------------------------------------------------------
    def send_error(self, msg_id: MsgId | None, code: int, message: str) -> None:
        self._send_data(ResponseErrorMessage(id=msg_id, error=ResponseError(code=code, message=message)))

    def _send_response(self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None) -> None:
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            # pygls attaches the traceback of an unexpected exception; it is in the log already, never on the wire.
            error = ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        """pygls's own, serialised strictly: a value JSON cannot hold (NaN, Infinity) never reaches the client. A
        result that is JSON text already (`JsonText`, from `WireModel.wire_answer`) goes into the answer as it is."""
        if not data or self.writer is None:
            super()._send_data(data)
            return
        if type(data) is JsonRPCResponseMessage and isinstance(data.result, JsonText):
            parts = [b'{"jsonrpc":"2.0","id":', json.dumps(data.id).encode(), b',"result":', data.result.data, b"}"]
        else:
            try:
                text = json.dumps(self._payload(data), default=self._plain, allow_nan=False)
            except (ValueError, TypeError, RecursionError):
                logger.exception("a message could not be written as JSON")
                msg_id = getattr(data, "id", None)
                if hasattr(data, "method") or not envelope.is_exact_id(msg_id):
                    return  # a request or notification of ours: nothing to answer
                error = ResponseError(
                    _INTERNAL_ERROR, "The answer could not be written as JSON; see the sidecar's log."
                )
                text = json.dumps(self._payload(ResponseErrorMessage(id=msg_id, error=error)))
            parts = [text.encode()]
        length = sum(map(len, parts))
        header = b"Content-Length: %d\r\nContent-Type: %s; charset=%s\r\n\r\n" % (
            length,
            self.CONTENT_TYPE.encode(),
            self.CHARSET.encode(),
        )
        self.writer.write(b"".join([header, *parts]))

    def _plain(self, value: Any) -> Any:
        """json.dumps's `default`: pygls's, and a JsonText result in a message of another kind made plain again."""
        if isinstance(value, JsonText):
            return json.loads(value.data)
        return self._serialize_message(value)

    def _payload(self, data: Any) -> Any:
        if isinstance(data, ResponseErrorMessage):
            # The converter drops a None id, but the spec wants `"id": null` on an error that answers no known id.
            return {**self._converter.unstructure(data), "id": data.id}
        return data


def _change(event: types.TextDocumentContentChangeEvent) -> Change:
    if isinstance(event, types.TextDocumentContentChangeWholeDocument):
        return Change(event.text)
    start, end = event.range.start, event.range.end
    return Change(event.text, Range(Position(start.line, start.character), Position(end.line, end.character)))
