"""One run of the harness: draw commands from both generators, keep the read-only ones, run them, report."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator

from tests.differential.generate import option_commands
from tests.differential.mutate import mutated_commands
from tests.differential.runner import Outcome, Report, read_only_commands, run_all


def command_stream(seed: int) -> Iterator[str]:
    """Commands from the option models and from the mutated corpus, alternately, reproducible from `seed`."""
    rng = random.Random(seed)
    from_models = option_commands(rng)
    from_corpus = mutated_commands(rng)
    while True:
        yield next(from_models)
        yield next(from_corpus)


def campaign(
    count: int,
    *,
    seed: int,
    seconds: float | None = None,
    workers: int = 2,
    each: Callable[[Outcome], None] | None = None,
) -> Report:
    """Run up to `count` read-only commands (stopping at `seconds`, when given) and report what they did;
    `each` sees every outcome as it comes."""
    started = time.monotonic()
    commands, drawn = read_only_commands(command_stream(seed), count)
    deadline = started + seconds if seconds is not None else None
    outcomes: list[Outcome] = []
    for outcome in run_all(commands, workers=workers, deadline=deadline):
        outcomes.append(outcome)
        if each is not None:
            each(outcome)
    return Report(drawn=drawn, ran=len(outcomes), outcomes=tuple(outcomes), seconds=time.monotonic() - started)
