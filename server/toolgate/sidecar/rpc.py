"""Server→client requests for the sidecar (approvals, diff reviews, questions), sent through pygls
(`send_request_async`): each ends answered, or withdrawn with `$/cancelRequest`."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any, TypeVar

from lsprotocol import types
from pydantic import ValidationError

from toolgate.sidecar.approvals import ClientUnavailable
from toolgate.sidecar.lsp_protocol import ToolgateProtocol
from toolgate.sidecar.protocol import DEFAULT_EDITOR_ANSWER_TIMEOUT_SECONDS, WireModel

logger = logging.getLogger("toolgate.sidecar")

ResultT = TypeVar("ResultT", bound=WireModel)


class EditorChannel:
    """Implements `approvals.ClientChannel` over pygls: server→client requests, answered or abandoned."""

    def __init__(
        self, protocol: ToolgateProtocol, answer_timeout: float = DEFAULT_EDITOR_ANSWER_TIMEOUT_SECONDS
    ) -> None:
        self._protocol = protocol
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._none_pending = asyncio.Event()
        self._closed = False
        # Every question ends: an editor that never answers costs one call (refused), never the session.
        self.answer_timeout = answer_timeout

    async def request(self, method: str, params: WireModel, result: type[ResultT]) -> ResultT:
        if self._closed:
            raise ClientUnavailable("the editor has disconnected")
        msg_id = f"toolgate-{uuid.uuid4().hex}"
        future = self._protocol.send_request_async(method, params.wire(), msg_id=msg_id)
        self._pending[msg_id] = future
        self._none_pending.clear()
        try:
            async with asyncio.timeout(self.answer_timeout):
                # asyncio.wait, not `await future`: being cancelled (a turn interrupted) must leave the future
                # as it is, for the handler below to withdraw the question.
                await asyncio.wait([future])
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

    def _abandon(self, msg_id: str, future: asyncio.Future[Any]) -> None:
        self._protocol.withdraw(msg_id)  # a late answer is then ignored
        future.cancel()
