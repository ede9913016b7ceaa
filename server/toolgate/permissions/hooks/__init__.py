"""Hooks: commands from settings that see the session's lifecycle and may have a say.

    events.py    the events, the JSON each reads on stdin, what each may answer, what exit 2 means
    config.py    the configured hooks, their matchers, and trust by content (a workspace hook's digest)
    process.py   running one hook (stdin pipe, capped output, timeout that kills its process group)
    outcome.py   what an event's hooks said, merged
    dispatch.py  running an event's hooks for a session (payload, scrubbed environment, sandbox)
    review.py    every hook with its trust state, and recording or dropping trust (`toolgate hooks`)

What a hook's decision may override is the engine's business (`permissions/decide.py`): a hook's allow never beats
a deny rule or a safety check.
"""

from __future__ import annotations

from toolgate.permissions.hooks.config import CompiledHooks, ConfiguredHook, compile_hooks, hook_digest
from toolgate.permissions.hooks.dispatch import HookDispatcher
from toolgate.permissions.hooks.events import HOOK_EVENTS, HookEvent
from toolgate.permissions.hooks.outcome import HookOutcome

__all__ = [
    "HOOK_EVENTS",
    "CompiledHooks",
    "ConfiguredHook",
    "HookDispatcher",
    "HookEvent",
    "HookOutcome",
    "compile_hooks",
    "hook_digest",
]
