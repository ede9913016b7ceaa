"""What the first session needs, imported while the editor is idle, so that the first message does not wait for it.

The editor opens a session when the person sends the first message; opening one imports the runtime, the tools and
the permission engine (about half a second). Start-up does not wait for any of that (`initialize` imports only what
it needs), so the sidecar imports it a moment later, one module at a time, on the event loop, and stops as soon as
anything else is going on: a request that arrives meanwhile waits for at most one module, and imports the rest
itself. (Not in a thread: two threads importing modules that import each other can fail with a deadlock error.)
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable, Sequence

logger = logging.getLogger("toolgate.sidecar")

# In the order a session needs them; the tools last (their modules are imported by `builtin_tools()`).
SESSION_MODULES = (
    "toolgate.sidecar.editor_sessions",
    "toolgate.runtime",
    "toolgate.agent.loop",
    "toolgate.tools.read",
    "toolgate.tools.edit",
    "toolgate.tools.write",
    "toolgate.tools.bash",
    "toolgate.tools.grep",
    "toolgate.tools.glob",
    "toolgate.tools.apply_patch",
    "toolgate.tools.web_fetch",
)
WARM_UP_AFTER_SECONDS = 1.0


async def warm_up(
    idle: Callable[[], bool], modules: Sequence[str] = SESSION_MODULES, after: float = WARM_UP_AFTER_SECONDS
) -> int:
    """Import `modules` while `idle()` holds; returns how many were imported by this call."""
    await asyncio.sleep(after)
    imported = 0
    for name in modules:
        if not idle():
            logger.debug("warm-up stopped after %d modules: the sidecar is busy", imported)
            break
        try:
            importlib.import_module(name)
        except Exception:  # a broken install shows itself when the module is used; here it only costs the warm-up
            logger.exception("warming up %s failed", name)
            break
        imported += 1
        await asyncio.sleep(0)  # let messages that arrived in the meantime in
    return imported
