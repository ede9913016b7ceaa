"""`make fuzz`'s long run: python -m tests.differential [--count N] [--seconds S] [--seed N].

Defaults come from TOOLGATE_DIFF_COUNT (2000), TOOLGATE_DIFF_SECONDS (1200) and TOOLGATE_DIFF_SEED (a fresh
one, printed so that a finding can be replayed). Exits 1 when there is a finding; each one is printed with
what it wrote or ran, to become a case in tests/unit/bash/test_differential_findings.py.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys

from tests.differential.campaign import campaign
from tests.differential.runner import Outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=int(os.environ.get("TOOLGATE_DIFF_COUNT", "2000")))
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("TOOLGATE_DIFF_SECONDS", "1200")))
    default_seed = os.environ.get("TOOLGATE_DIFF_SEED")
    parser.add_argument("--seed", type=int, default=int(default_seed) if default_seed else random.randrange(1 << 30))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    # Stopped from outside (make's Ctrl-C, a kill): unwind, so the fixture copies in the temp dir are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"differential run: seed {args.seed}, up to {args.count} commands or {args.seconds:.0f} s", flush=True)
    ran = 0

    def show(outcome: Outcome) -> None:
        nonlocal ran
        ran += 1
        if outcome.is_finding:
            print(outcome.describe(), flush=True)
        if outcome.timed_out:  # not a finding (what it did until then was judged), but worth a look
            print(f"timed out: {outcome.command}", flush=True)
        if ran % 250 == 0:
            print(f"... {ran} run", flush=True)

    report = campaign(args.count, seed=args.seed, seconds=args.seconds, workers=args.workers, each=show)
    print(report.summary())
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
