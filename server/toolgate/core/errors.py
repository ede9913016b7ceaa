"""Kinds of failure a tool call can end in, and how each is shown to the model.

Every failed tool_result names its kind, so a model can tell "you called it wrong" from "the world is not
in the state you assumed" from "a human has to approve this" from "it crashed".
"""

from __future__ import annotations

from enum import StrEnum


class ErrorKind(StrEnum):
    UNKNOWN_TOOL = "unknown_tool"  # no tool by that name or alias
    INVALID_INPUT = "invalid_input"  # the arguments do not fit the tool's schema
    STATE = "state"  # coherent arguments, but the files/session are not in the state they assume
    PERMISSION = "permission"  # not permitted (denied by a rule, or approval required and not given)
    FAILED = "failed"  # the tool ran and failed
    CANCELLED = "cancelled"  # interrupted before it produced a result


def format_error(kind: ErrorKind, message: str) -> str:
    return f'<tool_error kind="{kind.value}">\n{message.strip()}\n</tool_error>'


class ToolError(Exception):
    """Raised by a tool to end a call with a message for the model. No traceback is logged."""

    kind: ErrorKind = ErrorKind.FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StateError(ToolError):
    """The call is well-formed but does not fit the current state (never read, stale, not found, ...)."""

    kind = ErrorKind.STATE


class ToolFailure(ToolError):
    """The tool ran and failed in a way it understands (a non-zero exit, an I/O error)."""

    kind = ErrorKind.FAILED
