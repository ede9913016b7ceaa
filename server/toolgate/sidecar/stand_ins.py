"""toolgate/sandbox/standIns: which stand-ins the sandbox has in the person's tree, so the Explorer marks them.

The sandbox's placeholders module calls its watchers from whichever thread made or removed a stand-in; the
notification is written on the server's event loop (or directly when there is none, as in the in-process tests).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolgate.sidecar import protocol as p


def watch_stand_ins(notify: Callable[[str, Any], None]) -> Callable[[], None]:
    """Start telling the editor; returns what stops it."""
    from toolgate.sandbox import placeholders  # with the first session's imports, not before initialize

    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        loop = None

    def send(paths: list[Path]) -> None:
        params = p.StandInsParams(paths=[str(x) for x in paths]).wire()
        if loop is None or loop.is_closed():
            notify(p.SANDBOX_STAND_INS, params)
        else:
            loop.call_soon_threadsafe(notify, p.SANDBOX_STAND_INS, params)

    return placeholders.watch(send)
