"""A hook's place in the session's sandbox (`Sandbox.hook_place`, asked through `core.containment`).

A hook starts like a background Bash command (the same resident sandbox, the same writable places), with pipes of
the hook runner's own for its stdin, stdout and stderr; when the sandbox is off or unavailable (the launch holds no
lease), as a plain child.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolgate.core.containment import PlainPlace, StartedProcess
from toolgate.sandbox.resident import NotStartedAdvice, start_background

if TYPE_CHECKING:
    from toolgate.sandbox.runtime import Launch

# Read by the person (a hook problem), not the model: a hook has no outside_sandbox, and no one calls it again.
HOOK_ADVICE = NotStartedAdvice(
    refused="Hooks run inside the sandbox while it is on, and none can be let out of it: the directory a hook starts "
    "in (the session's current one) and what it runs must be visible there, where /tmp, /run and /var/tmp are private "
    "and empty. Change the hook's command, or the sandbox settings in your user settings (sandbox.enabled: off turns "
    "the sandbox off for commands and hooks alike).",
    stopped="The sandbox stopped; the hook runs in a new one the next time its event comes.",
)


@dataclass(eq=False)
class SandboxHookPlace:
    launch: Launch
    release: Callable[[], object]  # the sandbox's `finish(launch)`: the lease and the proxy channel go

    @property
    def sandboxed(self) -> bool:
        return self.launch.sandboxed

    def start(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str], stdin: int, stdout: int, stderr: int
    ) -> StartedProcess:
        lease = self.launch.lease
        if lease is None:
            return PlainPlace().start(argv, cwd, env, stdin, stdout, stderr)
        full = [*self.launch.prefix, *argv]
        return start_background(
            lease, full, cwd, {**env, **self.launch.env}, stdout, errors=stderr, stdin=stdin, advice=HOOK_ADVICE
        )

    def finish(self) -> None:
        self.release()
