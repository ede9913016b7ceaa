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
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)

from toolgate.sidecar.approvals import ClientUnavailable
from toolgate.sidecar.protocol import WireModel

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
    def receive(self, body: bytes) -> None:
        """Handle one framed message. Bad input is logged and answered when it was a request; never fatal."""
        try:
            data = json.loads(body)
        except ValueError as exc:
            logger.warning("ignored a message that is not valid JSON (%s)", exc)
            return
        if not isinstance(data, dict) or data.get("jsonrpc") != self.VERSION:
            logger.warning("ignored a message that is not a JSON-RPC 2.0 object: %.200s", body)
            return
        try:
            message = self.structure_message(data)
        except JsonRpcException as exc:
            # pygls would drop such a request unanswered, and its sender would wait forever.
            logger.warning("could not read a %r message: %s", data.get("method"), exc)
            if isinstance(data.get("id"), int | str) and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            return
        try:
            self.handle_message(message)
        except Exception:
            logger.exception("handling a %r message failed", data.get("method"))


class EditorChannel:
    """Implements `approvals.ClientChannel` over pygls: server→client requests, answered or abandoned."""

    def __init__(self, protocol: LanguageServerProtocol) -> None:
        self._protocol = protocol
        self._pending: dict[str, Future[Any]] = {}
        self._closed = False

    async def request(self, method: str, params: WireModel, result: type[ResultT]) -> ResultT:
        if self._closed:
            raise ClientUnavailable("the editor has disconnected")
        loop = asyncio.get_running_loop()
        answered = asyncio.Event()
        msg_id = f"toolgate-{uuid.uuid4().hex}"
        future = self._protocol.send_request(method, params.wire(), msg_id=msg_id)
        future.add_done_callback(lambda _f: loop.call_soon_threadsafe(answered.set))
        self._pending[msg_id] = future
        try:
            await answered.wait()
        except BaseException:
            # Cancelled: withdraw the question, so the editor can take its prompt down.
            if not future.done():
                self._abandon(msg_id, future)
                self._protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        finally:
            self._pending.pop(msg_id, None)
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

    def _abandon(self, msg_id: str, future: Future[Any]) -> None:
        # pygls keeps the future until an answer arrives; an answer to a cancelled future would raise inside
        # pygls, so forget it there too.
        self._protocol._request_futures.pop(msg_id, None)
        self._protocol._result_types.pop(msg_id, None)
        future.cancel()
