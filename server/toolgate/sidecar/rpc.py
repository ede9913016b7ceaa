"""pygls plumbing for the sidecar: plain-JSON params, message intake that never drops a request, and
server→client requests that end either answered or abandoned."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from concurrent.futures import Future
from typing import Any, TypeVar

import attrs
import cattrs
from lsprotocol import types
from lsprotocol.types import ResponseError, ResponseErrorMessage
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)

from toolgate.sidecar import envelope
from toolgate.sidecar.approvals import ClientUnavailable
from toolgate.sidecar.protocol import DEFAULT_EDITOR_ANSWER_TIMEOUT_SECONDS, WireModel
from toolgate.sidecar.transport import FramingError

logger = logging.getLogger("toolgate.sidecar")

ResultT = TypeVar("ResultT", bound=WireModel)


def _raw_fields(obj: dict[str, Any], cls: type[Any]) -> Any:
    return cls(**{field.name: obj.get(field.name) for field in attrs.fields(cls)})


def wire_converter() -> cattrs.Converter:
    """pygls's converter, except that params and results of methods it does not know stay plain JSON.

    By default pygls turns them into namedtuples; the protocol models validate plain JSON instead.
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _raw_fields)
    return converter


class _AnsweredErrors(logging.Filter):
    """pygls logs a traceback for every error a request handler raises. Toolgate's handlers raise only
    JsonRpcExceptions, after logging anything unexpected themselves; the rest are the client's mistakes
    (invalid params, unknown session), already answered, and not worth a traceback in the editor's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        answered = str(record.msg).startswith("Exception occurred for message")
        return not (answered and isinstance(error, JsonRpcException))


_PYGLS_RPC_LOGGER = logging.getLogger("pygls.protocol.json_rpc")
if not any(isinstance(f, _AnsweredErrors) for f in _PYGLS_RPC_LOGGER.filters):
    _PYGLS_RPC_LOGGER.addFilter(_AnsweredErrors())


class ToolgateProtocol(LanguageServerProtocol):
    """pygls's protocol behind a reader that never raises and a writer that only writes JSON.

    Every body is first judged by `envelope.decode`; what it refuses is answered as the JSON-RPC 2.0 spec says
    (or only logged, for what must get no answer), so pygls only ever sees sound messages. What leaves is
    serialised strictly (no NaN, no Infinity) and carries no traceback (that goes to the log)."""

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
            self._fail_pending(decoded.id, decoded.reason)
            return
        data = decoded.data
        if decoded.kind == "response":
            if data["id"] not in self._result_types:  # only the ids of our own requests wait for answers
                logger.warning("ignored an answer to %r, which is no request of ours still waiting", data["id"])
                return
        elif decoded.kind == "request":
            if self._shutdown and data["method"] != types.EXIT:
                self._send_error(data["id"], envelope.INVALID_REQUEST, "The server is shutting down.")
                return
            if data["id"] in self._request_futures:
                message = f"The id {json.dumps(data['id'])} is already used by a request still running; use a fresh id."
                self._send_error(data["id"], envelope.INVALID_REQUEST, message)
                return
        try:
            message = self.structure_message(data)
        except JsonRpcException as exc:
            # pygls would drop such a request unanswered, and its sender would wait forever.
            logger.warning("could not read a %r message: %s", data.get("method"), exc)
            if decoded.kind == "request":
                self._send_response(data["id"], error=exc.to_response_error())
            elif decoded.kind == "response":
                self._fail_pending(data["id"], exc.message)
            return
        self.handle_message(message)

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls's own, except that a request whose params do not fit is refused naming the fields (-32602)."""
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams as exc:
            cause = exc.__cause__
            if isinstance(cause, cattrs.ClassValidationError):
                fields = "; ".join(cattrs.transform_error(cause))
                raise JsonRpcInvalidParams(message=f"Invalid params for {data.get('method')}: {fields}") from None
            raise

    def _fail_pending(self, msg_id: int | str, reason: str) -> None:
        """An answer to one of our requests that cannot be read still ends that request (as an error)."""
        future = self._request_futures.get(msg_id)
        if msg_id not in self._result_types or future is None:
            logger.warning("ignored an unreadable answer to %r (%s)", msg_id, reason)
            return
        logger.warning("the answer to %r cannot be read (%s); taking it as an error", msg_id, reason)
        self._request_futures.pop(msg_id, None)
        self._result_types.pop(msg_id, None)
        if not future.done():
            future.set_exception(JsonRpcInvalidRequest(message=f"The answer cannot be read: {reason}"))

    def _send_error(self, msg_id: int | str | None, code: int, message: str) -> None:
        self._send_data(ResponseErrorMessage(id=msg_id, error=ResponseError(code=code, message=message)))

    def _send_response(self, msg_id: Any, result: Any | None = None, error: ResponseError | None = None) -> None:
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            # pygls attaches the traceback of an unexpected exception; it is in the log already, never on the wire.
            error = ResponseError(code=error.code, message=error.message)
        super()._send_response(msg_id, result, error)

    def _send_data(self, data: Any) -> None:
        """pygls's own, serialised strictly: a value JSON cannot hold (NaN, Infinity) never reaches the client."""
        if not data or self.writer is None:
            super()._send_data(data)
            return
        try:
            body = json.dumps(self._payload(data), default=self._serialize_message, allow_nan=False)
        except (ValueError, TypeError, RecursionError):
            logger.exception("a message could not be written as JSON")
            msg_id = getattr(data, "id", None)
            if hasattr(data, "method") or not envelope.is_exact_id(msg_id):
                return  # a request or notification of ours: nothing to answer
            error = ResponseError(
                code=-32603, message="The answer could not be written as JSON; see the sidecar's log."
            )
            body = json.dumps(self._payload(ResponseErrorMessage(id=msg_id, error=error)))
        if self._include_headers:
            content_type = f"{self.CONTENT_TYPE}; charset={self.CHARSET}"
            body = f"Content-Length: {len(body)}\r\nContent-Type: {content_type}\r\n\r\n{body}"
        self.writer.write(body.encode(self.CHARSET))

    def _payload(self, data: Any) -> Any:
        if isinstance(data, ResponseErrorMessage):
            # The converter drops a None id, but the spec wants `"id": null` on an error that answers no known id.
            return {**self._converter.unstructure(data), "id": data.id}
        return data


class EditorChannel:
    """Implements `approvals.ClientChannel` over pygls: server→client requests, answered or abandoned."""

    def __init__(
        self, protocol: LanguageServerProtocol, answer_timeout: float = DEFAULT_EDITOR_ANSWER_TIMEOUT_SECONDS
    ) -> None:
        self._protocol = protocol
        self._pending: dict[str, Future[Any]] = {}
        self._none_pending = asyncio.Event()
        self._closed = False
        # Every question ends: an editor that never answers costs one call (refused), never the session.
        self.answer_timeout = answer_timeout

    async def request(self, method: str, params: WireModel, result: type[ResultT]) -> ResultT:
        if self._closed:
            raise ClientUnavailable("the editor has disconnected")
        loop = asyncio.get_running_loop()
        answered = asyncio.Event()
        msg_id = f"toolgate-{uuid.uuid4().hex}"
        future = self._protocol.send_request(method, params.wire(), msg_id=msg_id)
        future.add_done_callback(lambda _f: loop.call_soon_threadsafe(answered.set))
        self._pending[msg_id] = future
        self._none_pending.clear()
        try:
            async with asyncio.timeout(self.answer_timeout):
                await answered.wait()
        except BaseException as exc:
            # Cancelled or out of time: withdraw the question, so the editor can take its prompt down.
            if not future.done():
                self._abandon(msg_id, future)
                self._protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            if isinstance(exc, TimeoutError):
                raise ClientUnavailable(
                    f"the editor did not answer {method} within {self.answer_timeout:g} s"
                ) from None
            raise
        finally:
            self._pending.pop(msg_id, None)
            if not self._pending:
                self._none_pending.set()
        if future.cancelled():
            raise ClientUnavailable("the editor disconnected before answering")
        error = future.exception()
        if error is not None:
            raise ClientUnavailable(f"the editor answered {method} with an error: {error}")
        try:
            return result.from_wire(future.result())
        except ValidationError as exc:
            raise ClientUnavailable(f"the editor's answer to {method} does not fit the protocol: {exc}") from None

    def close(self) -> None:
        """The editor is gone: every pending question ends unanswered (the approver turns that into "no")."""
        self._closed = True
        for msg_id, future in list(self._pending.items()):
            self._abandon(msg_id, future)

    async def settle(self) -> None:
        """After `close`: until every question that was pending has ended as unanswered. (Interrupting the turns
        before that would turn their "no, nobody answered" into "withdrawn".)"""
        if self._pending:
            await self._none_pending.wait()

    def _abandon(self, msg_id: str, future: Future[Any]) -> None:
        # pygls keeps the future until an answer arrives; an answer to a cancelled future would raise inside
        # pygls, so forget it there too.
        self._protocol._request_futures.pop(msg_id, None)
        self._protocol._result_types.pop(msg_id, None)
        future.cancel()
