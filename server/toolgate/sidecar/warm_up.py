"""What the first session needs, imported while the editor is idle, so that the first message does not wait for it.

The editor opens a session when the person sends the first message; opening one imports the runtime, the tools and
the permission engine (about half a second). Start-up does not wait for any of that (`initialize` imports only what
it needs), so the sidecar imports it a moment later, a step at a time (a module; at the end, building the tools),
on the event loop, and stops as soon as anything else is going on: a request that arrives meanwhile waits for at
most one step, and imports the rest itself. (Not in a thread: two threads importing modules that import each other
can fail with a deadlock error.)
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
from collections.abc import Callable, Sequence

logger = logging.getLogger("toolgate.sidecar")

# In the order a session needs them; the tools come after (the server adds building them), then SESSION_MODELS.
# anyio's asyncio backend is imported by the first anyio lock or event a session makes (about 40 ms).
SESSION_MODULES = (
    "toolgate.sidecar.editor_sessions",
    "toolgate.runtime",
    "toolgate.agent.loop",
    "anyio._backends._asyncio",
)
# The models opening a session validates first; each is built on first use (`defer_build`), a few ms apiece.
SESSION_MODELS = (
    "toolgate.sidecar.protocol:SessionNewParams",
    "toolgate.session_files:SessionMeta",
    "toolgate.sandbox.runtime:SandboxSettings",  # the largest (about 40 ms)
    "toolgate.checkpoints.settings:CheckpointSettings",
    "toolgate.sidecar.protocol:SessionInfo",
)
# Long enough for the editor's first burst (open buffers, the session list) to arrive, which pauses the warm-up
# anyway; short enough that the warm-up (about 0.5 s of imports on an idle machine, several times that on a busy
# one) is done when a person sends a first message 2 s after the window opened.
WARM_UP_AFTER_SECONDS = 0.25


def importing(modules: Sequence[str]) -> list[Callable[[], object]]:
    """One warm-up step per module."""
    return [functools.partial(importlib.import_module, name) for name in modules]


def building(models: Sequence[str]) -> list[Callable[[], object]]:
    """One warm-up step per pydantic model, named `module:Class`: its validator built now, not by its first use."""
    return [functools.partial(_build, name) for name in models]


def _build(name: str) -> None:
    module, _, model = name.partition(":")
    getattr(importlib.import_module(module), model).model_rebuild()


async def warm_up(
    idle: Callable[[], bool], steps: Sequence[Callable[[], object]], after: float = WARM_UP_AFTER_SECONDS
) -> int:
    """Take `steps` (imports, mostly) one at a time while `idle()` holds; returns how many were taken."""
    await asyncio.sleep(after)
    done = 0
    for step in steps:
        if not idle():
            logger.debug("warm-up stopped after %d steps: the sidecar is busy", done)
            break
        try:
            step()
        except Exception:  # a broken install shows itself when the module is used; here it only costs the warm-up
            logger.exception("warming up failed (%s)", getattr(step, "args", step))
            break
        done += 1
        await asyncio.sleep(0)  # let messages that arrived in the meantime in
    return done
