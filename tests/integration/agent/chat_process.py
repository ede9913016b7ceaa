"""`toolgate chat --print` as a real subprocess in its own process group, for the tests that drive it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from toolgate.mockmodel import MockModelServer


class Chat:
    """One `toolgate chat` process in its own process group; the group is killed at the end."""

    def __init__(self, args: list[str], env: dict[str, str], program: list[str] | None = None) -> None:
        self.process = subprocess.Popen(
            [*(program or [sys.executable, "-m", "toolgate"]), "chat", "--print", *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def lines(self) -> Iterator[dict[str, Any]]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            yield json.loads(line)

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, out, err

    def kill(self, signum: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signum)

    def close(self) -> None:
        self.kill()
        self.process.communicate()


def anthropic_env(env: dict[str, str], mock: MockModelServer) -> dict[str, str]:
    return {**env, "ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_API_KEY": "test-key"}
