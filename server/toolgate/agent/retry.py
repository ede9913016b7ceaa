"""How long to wait before sending a failed model request again. The sleep is injectable for tests."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, capped; a server's `retry-after` wins when it gives one.

    `max_attempts` counts every attempt, the first one included.
    """

    max_attempts: int = 8
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.25  # up to ±25%, so many clients that failed together do not return together
    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        exponential = min(self.base_delay * (2 ** (attempt - 1)), self.max_delay)
        return float(exponential * (1 + random.uniform(-self.jitter, self.jitter)))
