"""The temp files an atomic write stages beside its target, and the sweeping of ones a killed writer left behind.

A temp file is named `.<target name>.<writer pid>.<random>.tg-tmp`. A writer that is killed between creating it
and renaming it into place (SIGKILL, power loss) leaves it behind. The next write to the same target removes such
leftovers, and so does a session's first read of it (a session that only reads after a crash still cleans up),
but only when they are surely abandoned: the writer's pid is not a running process on this machine
and the file has not been touched for a while. A live writer in another process is never disturbed (a reused pid
only makes the sweep more cautious), and nothing but our own `.tg-tmp` names is ever removed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path

from toolgate.core.context import ToolContext
from toolgate.core.deps import Dep
from toolgate.shell.groups import process_alive

SUFFIX = ".tg-tmp"
# A live writer touches its temp file continuously; one untouched this long with a dead writer is abandoned.
ABANDONED_AFTER_SECONDS = 60.0

log = logging.getLogger("toolgate.write")


def temp_prefix(target: Path) -> str:
    """The start of the temp file names this process uses for `target` (the name is cut to stay under limits)."""
    return f"{_target_prefix(target)}{os.getpid()}."


def _target_prefix(target: Path) -> str:
    return f".{target.name[:100]}."


def _writer_pid(name: str, prefix: str) -> int | None:
    """The pid in `<prefix><pid>.<random>.tg-tmp`; None for any other shape (such as another target's temp file)."""
    pid, _, rest = name[len(prefix) :].partition(".")
    random_part = rest.removesuffix(SUFFIX)
    if not (pid.isdigit() and rest.endswith(SUFFIX) and random_part and "." not in random_part):
        return None
    return int(pid)


def sweep_abandoned(target: Path, now: float | None = None, *, folder: int | None = None) -> list[Path]:
    """Remove the abandoned temp files of earlier writes to `target`; returns what was removed.

    `folder`: a descriptor of the target's folder (a write holds the one it wrote through), listed and removed
    from instead of the folder named by `target`'s path, so no swapped-in link is followed."""
    prefix = _target_prefix(target)
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = os.scandir(target.parent if folder is None else folder)
    except OSError:
        return removed
    with entries:
        for entry in entries:
            if not (entry.name.startswith(prefix) and entry.name.endswith(SUFFIX)):
                continue
            pid = _writer_pid(entry.name, prefix)
            if pid is None or pid == os.getpid() or process_alive(pid):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if now - info.st_mtime < ABANDONED_AFTER_SECONDS or not entry.is_file(follow_symlinks=False):
                    continue
                if folder is None:
                    os.unlink(entry.path)
                else:
                    os.unlink(entry.name, dir_fd=folder)
                removed.append(target.parent / entry.name)
    if removed:
        log.info("removed %d abandoned temp file(s) of earlier writes to %s", len(removed), target)
    return removed


# The targets this session has swept already: a read sweeps once per target and session, a write every time.
_SWEPT_BY_READS: Dep[set[Path]] = Dep("temp_files_swept_by_reads", lambda _r: set())


def sweep_on_first_read(ctx: ToolContext, target: Path) -> None:
    """Sweep `target`'s abandoned temp files the first time this session reads it.

    Synchronous on purpose, like the sweep after a write: one directory listing, and no await point that
    would let a cancelled turn stop a read before it is recorded."""
    swept = ctx.get(_SWEPT_BY_READS)
    if target in swept:
        return
    swept.add(target)
    sweep_abandoned(target)
