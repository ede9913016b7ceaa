"""How hard property tests look: a fixed, repeatable budget in `make test`, a larger random one in `make fuzz`."""

from __future__ import annotations

import os

from hypothesis import settings

FUZZ_FACTOR = 20
FUZZING = os.environ.get("TOOLGATE_HYPOTHESIS") == "fuzz"

# `make test` replays the same examples on every run, so a green run here is a green run in CI; `make fuzz` draws
# fresh ones to look for new failures, and each failure it finds becomes an @example case.
settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("fuzz", max_examples=100 * FUZZ_FACTOR, deadline=None, print_blob=True)
settings.load_profile("fuzz" if FUZZING else "repeatable")


def examples(count: int) -> int:
    """A test's example budget: `count` normally, FUZZ_FACTOR times more under `make fuzz`."""
    return count * FUZZ_FACTOR if FUZZING else count
