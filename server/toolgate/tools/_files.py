"""File-system helpers shared by the file tools: what to say about a path that is not a readable file."""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError
from toolgate.core.paths import display_path, is_within
from toolgate.text.suggest import closest_names

# Paths that never end (zero, random), block waiting for input (stdin, tty) or write back to us.
_DEVICE_PATTERNS = (
    re.compile(r"^/dev/(zero|random|urandom|full|stdin|stdout|stderr|tty\w*|console|ptmx|pts/.*)$"),
    re.compile(r"^/dev/fd/\d+$"),
    re.compile(r"^/proc/(self|thread-self|\d+)(/task/\d+)?/fd/\d+$"),
)


def is_device_path(path: Path) -> bool:
    text = str(path)
    # Every pattern is anchored under /dev/ or /proc/: any other path (every ordinary Read) needs no regex.
    if not text.startswith(("/dev/", "/proc/")):
        return False
    return any(p.match(text) for p in _DEVICE_PATTERNS)


def did_you_mean(path: Path, ctx: ToolContext) -> list[str]:
    """Near names in the same directory, and the workspace-relative reading of a rooted path."""
    suggestions: list[str] = []
    # "/src/app.py" is often meant relative to the workspace.
    if path.is_absolute() and not is_within(path, ctx.workspace):
        candidate = ctx.workspace / str(path).lstrip("/")
        with contextlib.suppress(OSError):
            if candidate.exists():
                suggestions.append(str(candidate))
    parent = path.parent
    try:
        names = os.listdir(parent) if parent.is_dir() else []
    except OSError:
        names = []
    suggestions.extend(str(parent / name) for name in closest_names(path.name, names))
    return suggestions[:3]


def missing_message(path: Path, ctx: ToolContext, what: str = "file") -> str:
    text = f"No {what} exists at {path}."
    guesses = did_you_mean(path, ctx)
    if guesses:
        text += " Did you mean " + " or ".join(guesses) + "?"
    else:
        text += f" Relative paths resolve against the workspace ({ctx.workspace}); use Glob to find the file."
    return text


def stat_regular_file(path: Path, ctx: ToolContext) -> os.stat_result:
    """stat() a path that must be a regular file; every other outcome is a StateError that says what to do."""
    if is_device_path(path):
        raise StateError(
            f"{path} is a device or stream, not a file: reading it would block or never end. "
            "Read a regular file instead."
        )
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise StateError(missing_message(path, ctx)) from None
    except PermissionError:
        raise StateError(
            f"Permission denied: toolgate's user may not access {display_path(path, ctx.workspace)}. Pick another "
            "file or ask the user to change its permissions."
        ) from None
    except OSError as exc:
        raise StateError(f"{display_path(path, ctx.workspace)} cannot be accessed: {exc.strerror or exc}.") from None
    if stat.S_ISREG(st.st_mode):
        return st
    shown = display_path(path, ctx.workspace)  # only for the refusals below: every Read passes here
    if stat.S_ISDIR(st.st_mode):
        raise StateError(f"{shown} is a directory, not a file. Use Glob to list the files in it.")
    raise StateError(f"{shown} is not a regular file (it is a device, pipe or socket), so it cannot be read as text.")
