"""The JSON-RPC errors the sidecar answers with: one exception per code, raised by handlers, sent by the endpoint.

A handler raises one of these to answer its request with that error; any other exception is a bug of ours and
is answered as an internal error (the traceback goes to the log, never onto the wire).
"""

from __future__ import annotations

from typing import Any


class RpcError(Exception):
    """An error answer: `code` as JSON-RPC 2.0 / LSP define it, `message` in words a person can act on."""

    code: int = -32603

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class InvalidRequestError(RpcError):
    code = -32600


class MethodNotFoundError(RpcError):
    code = -32601


class InvalidParamsError(RpcError):
    code = -32602


class InternalError(RpcError):
    code = -32603


class NotInitializedError(RpcError):
    """LSP: a request before `initialize` was answered."""

    code = -32002


class RequestCancelledError(RpcError):
    """LSP: the client cancelled the request (`$/cancelRequest`) and it ended without a result."""

    code = -32800


class ErrorAnswer(RpcError):
    """The client answered one of *our* requests with an error; its code is whatever the client sent."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message, data)
        self.code = code

    def __str__(self) -> str:
        return f"{self.message} (error {self.code})"
