"""toolgate/provider/configure|status and toolgate/chat/send|interrupt|history|compact: the model a session talks
to, and the conversation itself.

A message the person sends runs under `finish_despite_cancel`, so that cancelling the request interrupts the
turn instead of tearing it down. What the person attached is read here, under the session's Read
rules: a file a rule denies is not read, however it was attached.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pygls.exceptions import JsonRpcInvalidRequest

from toolgate.sidecar import protocol as p
from toolgate.sidecar.documents import EditorDocuments

if TYPE_CHECKING:  # types only: the server imports this module before initialize
    from toolgate.core.messages import TextBlock
    from toolgate.sidecar.chat import ChatHost
    from toolgate.sidecar.editor_sessions import EditorSession, SessionManager

T = TypeVar("T")


class FinishDespiteCancel(Protocol):
    """The server's way to run a request's work to its end when the client cancels it (the work's result kept)."""

    def __call__(self, work: Awaitable[T], interrupt: Callable[[], object], what: str) -> Awaitable[T]: ...


def chat_handlers(
    sessions: Callable[[], SessionManager],
    chats: Callable[[], ChatHost],
    documents: EditorDocuments,
    finish_despite_cancel: FinishDespiteCancel,
) -> dict[str, Callable[[Any], Awaitable[p.WireModel]]]:
    """The six methods, for the server's handler table (`sessions` and `chats` are built on first use)."""

    async def provider_configure(params: p.ProviderConfigureParams) -> p.ProviderStatus:
        return chats().configure(params)

    async def provider_status(params: p.Empty) -> p.ProviderStatus:
        return chats().status()

    async def send(params: p.ChatSendParams) -> p.ChatSendResult:
        from toolgate.agent.loop import ChatBusy

        live = sessions().get(params.session_id)
        chat = chats().chat_for(live)
        try:
            attach = functools.partial(attachment_blocks, live, params.attachments)
            sending = live.chat_send(chat, params.text, attach)
            stop = await finish_despite_cancel(sending, chat.interrupt, "chat/send")
        except ChatBusy as exc:
            raise JsonRpcInvalidRequest(message=str(exc)) from None
        return p.ChatSendResult(stop_reason=stop)

    async def attachment_blocks(live: EditorSession, attachments: list[p.Attachment]) -> list[TextBlock]:
        from toolgate.sidecar import attachments as read
        from toolgate.sidecar.attached_problems import attached_problems_text

        session = live.runtime.session
        refused: dict[str, str] = {}
        problems: dict[str, str] = {}
        for attachment in attachments:  # the person chose them (no asking), but what the rules deny stays unread
            if attachment.kind == "problems":
                problems[attachment.path or ""] = await attached_problems_text(live.runtime, attachment.path)
                continue
            path = read.attachment_path(attachment, session.workspace)
            check = None if path is None else await live.runtime.check("Read", {"file_path": str(path)})
            if check is not None and check.decision == "deny":
                refused[attachment.path or ""] = check.reason
        return read.attachment_blocks(
            attachments,
            workspace=session.workspace,
            documents=documents,
            file_state=session.file_state,
            refused=refused,
            problems=problems,
        )

    async def compact(params: p.ChatCompactParams) -> p.ChatCompactResult:
        live = sessions().get(params.session_id)
        chat = chats().chat_for(live)
        async with live.between_turns():  # refused while a turn runs, like a rewind
            return p.ChatCompactResult(compacted=await chat.compact(params.focus))

    async def interrupt(params: p.SessionRef) -> p.ChatInterruptResult:
        live = sessions().get(params.session_id)
        return p.ChatInterruptResult(interrupted=live.chat.interrupt() if live.chat is not None else False)

    async def history(params: p.SessionRef) -> p.ChatHistoryResult:
        return chats().history(sessions().get(params.session_id))

    return {
        p.PROVIDER_CONFIGURE: provider_configure,
        p.PROVIDER_STATUS: provider_status,
        p.CHAT_SEND: send,
        p.CHAT_INTERRUPT: interrupt,
        p.CHAT_HISTORY: history,
        p.CHAT_COMPACT: compact,
    }
