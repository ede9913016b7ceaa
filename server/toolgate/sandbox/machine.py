"""What a sandbox plan needs to know about this machine: real paths, the tool directories on PATH, a python3 the
sandbox can see, and the entries that spell a protected name in another case. Small I/O, kept apart from the
session's sandbox (runtime.py) and the pure plan builder (policy.py)."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from toolgate.core.errors import StateError
from toolgate.permissions.safety import case_variants
from toolgate.sandbox.policy import PRIVATE_DIRS, tool_dirs_for


def plan_roots(roots: Sequence[Path]) -> list[Path]:
    return [Path(os.path.realpath(p)) for p in roots]


def case_variants_at(roots: Sequence[Path]) -> tuple[Path, ...]:
    """The entries at the top of each root that spell a protected name in another case (listed per command: one
    that appears makes the policy differ, so the next command gets a sandbox that protects it)."""
    found: list[Path] = []
    for root in roots:
        try:
            names = os.listdir(root)
        except OSError:
            continue  # not there (or unreadable): the plan does not bind it either
        found += (root / name for name in case_variants(names))
    return tuple(found)


@functools.lru_cache(maxsize=8)
def tool_dirs(path_env: str) -> tuple[Path, ...]:
    """The tool directories for this process's PATH, which commands inherit (the scrubbed environment keeps
    it). Cached by its value: every command asks, and resolving each entry costs a command a good part of a
    millisecond."""
    return tool_dirs_for(plan_roots([Path(e) for e in path_env.split(os.pathsep) if e.startswith("/")]))


def forwarder_python() -> str:
    """A python3 the sandbox can see: this one, unless it lives in a directory the sandbox makes private."""
    for candidate in (os.path.realpath(sys.executable), shutil.which("python3"), "/usr/bin/python3"):
        visible = candidate and not any(Path(candidate).is_relative_to(p) for p in PRIVATE_DIRS)
        if candidate and visible and os.access(candidate, os.X_OK):
            return candidate
    raise StateError(
        "The sandbox needs a python3 outside /tmp (it starts the commands inside, and forwards their network "
        "traffic), and none was found, so the command did not run. Install python3, or turn the sandbox off "
        "(sandbox.enabled: off) and let the user approve commands one by one."
    )
