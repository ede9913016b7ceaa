"""`make bench`: run every bench/bench_*.py module and write bench/results/report.{json,md}.

Each module exposes `run(report: Report, workdir: Path) -> None` and adds figures with a baseline measured
in the same run, so the ratios mean something on any machine.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import shutil
import sys
import tempfile
from pathlib import Path

import bench
from bench.report import Report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("only", nargs="*", help="run only these modules (e.g. bench_runner)")
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    args = parser.parse_args(argv)
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    if args.only:
        names = [n for n in names if n in args.only]
    report = Report()
    for name in names:
        print(f"{name}:", flush=True)
        module = importlib.import_module(f"bench.{name}")
        workdir = Path(tempfile.mkdtemp(prefix=f"toolgate-{name}-"))
        try:
            module.run(report, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    json_path, md_path = report.write(args.out)
    print(f"wrote {json_path} and {md_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
