"""What the permission engine may know about containment, without importing the sandbox.

The sandbox (`toolgate.sandbox`) sits above the permission engine: it reads the engine's network and safety
tables, so the engine must not import it back. Two questions go through this dependency instead:
- the ladder's sandbox step ("a Bash call that runs contained may skip the ask whose only reason the sandbox
  covers") asks `auto_allows`;
- the hook runner asks `hook_place` where a hook's command starts: in the session's sandbox when it is on
  (writable as a Bash command is: the working directories minus their protected paths), else as a plain child.
Its default contains nothing, so a session nobody wired to a sandbox removes no ask (fail closed) and runs hooks
as plain children; `toolgate.runtime` points it at the session's sandbox.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from toolgate.core.deps import Dep


class StartedProcess(Protocol):
    """The parts of `subprocess.Popen` a hook runner uses (a sandboxed command offers the same)."""

    @property
    def pid(self) -> int: ...  # also its process group: every start below makes a session of its own

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class HookPlace(Protocol):
    """Where one hook command runs. `start` wires the given descriptors as its stdin, stdout and stderr (never
    this process's own: no hook reads the person's terminal); `finish` lets go of what the place held."""

    @property
    def sandboxed(self) -> bool: ...

    def start(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], stdin: int, stdout: int, stderr: int
    ) -> StartedProcess: ...

    def finish(self) -> None: ...


class PlainPlace:
    """A plain child process in a session (and process group) of its own."""

    sandboxed = False

    def start(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], stdin: int, stdout: int, stderr: int
    ) -> StartedProcess:
        return subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env), stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True
        )

    def finish(self) -> None:
        pass


class Containment(Protocol):
    def auto_allows(self, tool_name: str, tool_input: BaseModel) -> bool:
        """Whether this call will run contained, with the containment's own auto-allow switched on."""
        ...

    def hook_place(self, roots: Sequence[Path], home: Path) -> HookPlace:
        """Where a hook runs: contained when the containment is on (`roots`: the working directories)."""
        ...


class NotContained:
    """No containment: every ask stays an ask, and hooks run as plain children."""

    def auto_allows(self, tool_name: str, tool_input: BaseModel) -> bool:
        return False

    def hook_place(self, roots: Sequence[Path], home: Path) -> HookPlace:
        return PlainPlace()


CONTAINMENT: Dep[Containment] = Dep("containment", lambda _r: NotContained())
