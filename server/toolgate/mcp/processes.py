"""Which process group a stdio MCP server runs in, so the watchdog (shell/watchdog.py) covers it.

The SDK starts each stdio server in a new session (its own process group) but does not say which pid it got.
If toolgate is killed with SIGKILL the SDK's own shutdown never runs, so the group is handed to the watchdog
like every Bash group: found as the child of this process that leads its own session and runs the command.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

_PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    return text[text.rfind(")") + 2 :].split()


def _cmdline(pid: int) -> list[str]:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def server_group(args: Sequence[str], known: set[int]) -> int | None:
    """The pgid of our child session leader whose command line ends with `args`, not one of `known`."""
    me = os.getpid()
    try:
        entries = list(_PROC.iterdir())
    except OSError:
        return None
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) in known:
            continue
        pid = int(entry.name)
        fields = _stat_fields(pid)
        # fields: state, ppid, pgrp, session, ...
        if fields is None or len(fields) < 4 or int(fields[1]) != me or int(fields[3]) != pid:
            continue
        cmdline = _cmdline(pid)
        if not args or cmdline[-len(args) :] == list(args):
            return pid
    return None
