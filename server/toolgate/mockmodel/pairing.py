"""The request checks the real APIs make, written independently of the agent's own repair code.

The checks are deliberately the strict reading: a request the loop should never produce is rejected with a
400, so a test against the mock fails where a real API would.
"""

from __future__ import annotations

from typing import Any


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def check_anthropic(body: Any) -> str | None:
    """None when the Messages request is well formed, else what is wrong with it."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: required"
    seen_ids: set[str] = set()
    pending: list[str] = []  # tool_use ids of the previous assistant message
    previous_role = None
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            return f"{where}.role: must be user or assistant"
        if index == 0 and role != "user":
            return f"{where}: the first message must be from the user"
        if role == previous_role:
            return f"{where}: roles must alternate, but two {role} messages follow each other"
        blocks = _blocks(message.get("content"))
        if not blocks:
            return f"{where}.content: a message must not be empty"
        for position, block in enumerate(blocks):
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"{where}.content.{position}: text blocks must contain non-whitespace text"
        if role == "user":
            results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            missing = [i for i in pending if i not in results]
            if missing:
                return (
                    f"{where}: tool_use ids {missing} have no tool_result in this message; every tool_use must be "
                    "answered by a tool_result in the message right after it"
                )
            unexpected = [i for i in results if i not in pending]
            if unexpected:
                return f"{where}: tool_result ids {unexpected} answer no tool_use of the previous message"
            if len(set(results)) != len(results):
                return f"{where}: a tool_use is answered twice"
            leading = blocks[: len(results)]
            if any(b.get("type") != "tool_result" for b in leading):
                return f"{where}: tool_result blocks must come before any other content"
            pending = []
        else:
            if pending:
                return f"{where}: tool_use ids {pending} were never answered"
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            for use in uses:
                use_id = use.get("id")
                if not isinstance(use_id, str) or not use_id:
                    return f"{where}: a tool_use has no id"
                if use_id in seen_ids:
                    return f"{where}: tool_use id {use_id} is used twice"
                if not isinstance(use.get("input"), dict):
                    return f"{where}: tool_use {use_id} input must be an object"
                seen_ids.add(use_id)
            pending = [u["id"] for u in uses]
        previous_role = role
    if pending:
        return f"messages: tool_use ids {pending} in the last message were never answered"
    if previous_role != "user":
        return "messages: the last message must be from the user (this mock does not continue assistant messages)"
    return None


def check_openai(body: Any) -> str | None:
    """None when the Chat Completions request is well formed, else what is wrong with it."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    pending: list[str] = []
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return f"{where}.role: unknown role {role!r}"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return f"{where}: a tool message must answer a tool_call of the preceding assistant message"
            pending.remove(call_id)
            continue
        if pending:
            return (
                f"{where}: an assistant message with tool_calls must be followed by tool messages answering each "
                f"tool_call_id; {pending} were not answered"
            )
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if not calls and not message.get("content"):
                return f"{where}: an assistant message needs content or tool_calls"
            for call in calls:
                call_id = call.get("id") if isinstance(call, dict) else None
                if not isinstance(call_id, str) or not call_id or call_id in seen_ids:
                    return f"{where}: every tool_call needs a unique id"
                arguments = (call.get("function") or {}).get("arguments")
                if not isinstance(arguments, str):
                    return f"{where}: tool_call {call_id} arguments must be a string"
                seen_ids.add(call_id)
            pending = [c["id"] for c in calls]
        elif role == "user" and not message.get("content"):
            return f"{where}: a user message needs content"
    if pending:
        return f"messages: tool_calls {pending} in the last message were never answered"
    return None
