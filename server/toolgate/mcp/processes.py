"""Which process group a stdio MCP server runs in, so the watchdog (shell/watchdog.py) covers it.

The SDK starts each stdio server in a new session (its own process group) but does not say which pid it got.
If toolgate is killed with SIGKILL the SDK's own shutdown never runs, so the group is handed to the watchdog
like every Bash group. To learn it at spawn, without scanning /proc for our children (a stat of every process
on the machine, on the event loop, at every start), the server is started through a one-line shell:

    /bin/sh -c 'echo "toolgate-mcp-group $$" >&2; exec "$0" "$@"' COMMAND ARGS...

The shell is the new session's leader, so its pid is the group's id; it says so as the first line of the
server's stderr (which toolgate reads anyway: server_log.py) and then becomes the server with `exec`, keeping
that pid. Whatever the server then execs or spawns stays in the group.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Mapping
from pathlib import Path

from toolgate.shell.watchdog import WATCHDOG

SHELL = "/bin/sh"
_SAYS_GROUP = 'echo "toolgate-mcp-group $$" >&2; exec "$0" "$@"'
_GROUP_LINE = re.compile(r"toolgate-mcp-group (\d+)\n?")


def reporting_group(command: str, args: list[str]) -> tuple[str, list[str]] | None:
    """The command and arguments that start `command args` so that it says its process group first; None where
    there is no POSIX shell to do it (the group is then not covered by the watchdog)."""
    if os.name != "posix" or not os.access(SHELL, os.X_OK):
        return None
    return SHELL, ["-c", _SAYS_GROUP, command, *args]


def group_in(line: str) -> int | None:
    """The group a server's first stderr line reports, if it is that line."""
    found = _GROUP_LINE.fullmatch(line)
    return int(found.group(1)) if found else None


def missing_command(command: str, environ: Mapping[str, str], cwd: Path) -> str | None:
    """Why `command` cannot be started (not found, or not executable), or None. Asked before the spawn because
    the shell above would only say so on stderr and exit."""
    if os.sep in command:
        path = Path(command) if os.path.isabs(command) else cwd / command
        if path.is_file() and os.access(path, os.X_OK):
            return None
        return f"its command {str(path)!r} does not exist or is not executable"
    search = environ.get("PATH", os.defpath)
    if shutil.which(command, path=search) is not None:
        return None
    return f"its command {command!r} is not on the PATH it gets ({search})"


class ServerGroup:
    """A server's process group once its first stderr line names it, tracked by the watchdog until `close`.
    `found` is called by the thread that reads the server's stderr; the rest by the connection."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known = threading.Event()
        self._closed = False
        self.pgid: int | None = None

    def found(self, pgid: int) -> None:
        with self._lock:
            if self._closed or self.pgid is not None:
                return
            self.pgid = pgid
            WATCHDOG.track(pgid)
        self._known.set()

    def unsaid(self) -> None:
        """The server's stderr ended without naming its group."""
        self._known.set()

    def wait(self, timeout: float) -> int | None:
        """The group, once said (a blocking wait: run it in a worker thread); None if not said in `timeout`."""
        self._known.wait(timeout)
        return self.pgid

    def close(self) -> None:
        """The server is gone (or going): the watchdog must never signal that group again."""
        with self._lock:
            self._closed = True
            if self.pgid is not None:
                WATCHDOG.forget(self.pgid)
        self._known.set()
