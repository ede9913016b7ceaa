"""A stdio MCP server's stderr: kept in its own file (`<data>/mcp/logs/<server>.log`) and in toolgate's log.

toolgate's log is the sidecar's stderr, which the editor shows in its output channel: a server that fails to
start usually says why on stderr, and the person should not have to find a file to read it. Each line is
logged with the server's name. The SDK wants a file for the child's stderr, so it gets the write end of a
pipe; a thread copies what arrives to both places and ends when the server (every holder of the write end)
is gone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TextIO

from toolgate.mcp.processes import ServerGroup, group_in

log = logging.getLogger("toolgate.mcp.stderr")

# A server that floods stderr is still copied to its file in full; toolgate's log gets each line cut here.
LOGGED_LINE_CHARS = 2000


def _copy(name: str, source: IO[str], log_path: Path, group: ServerGroup | None) -> None:
    with source, open(log_path, "a", encoding="utf-8") as out:
        for line in source:
            if group is not None:
                said, first, group = group_in(line), group, None  # only the first line may say it (processes.py)
                if said is not None:
                    first.found(said)
                    continue
                first.unsaid()
            out.write(line)
            out.flush()
            text = line.rstrip("\n")
            if len(text) > LOGGED_LINE_CHARS:
                text = text[:LOGGED_LINE_CHARS] + f" … ({len(text) - LOGGED_LINE_CHARS} more characters in {log_path})"
            log.info("[mcp %s] %s", name, text)
    if group is not None:
        group.unsaid()  # the stream ended before a first line: nobody waits for it any longer


@contextlib.contextmanager
def stderr_pipe(name: str, log_path: Path, group: ServerGroup | None = None) -> Iterator[TextIO]:
    """A file to hand the SDK as the server's stderr; what is written to it lands in `log_path` and the log.
    `group`: told the process group the first line reports (processes.py), which is not logged."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    read_fd, write_fd = os.pipe()  # not inherited by other children: only the server gets it, as its stderr
    reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
    writer = os.fdopen(write_fd, "w", encoding="utf-8")
    threading.Thread(target=_copy, args=(name, reader, log_path, group), name=f"mcp-stderr-{name}", daemon=True).start()
    try:
        yield writer
    finally:
        writer.close()  # the copy ends at EOF, once the server's own copy of the write end is closed too
