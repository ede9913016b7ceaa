"""Collects benchmark figures and writes them as JSON (for machines) and a markdown table (for people)."""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Figure:
    group: str
    name: str
    value: float
    unit: str
    baseline_name: str | None = None
    baseline_value: float | None = None
    note: str = ""
    # The median of per-round ratios, for a figure timed in rounds of both sides back to back: under a load that
    # swings between rounds it is the honest ratio, where the ratio of the two medians mixes different rounds.
    paired_ratio: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.paired_ratio is not None:
            return self.paired_ratio
        if self.baseline_value in (None, 0):
            return None
        assert self.baseline_value is not None
        return self.value / self.baseline_value


@dataclass
class Report:
    figures: list[Figure] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    def add(self, figure: Figure) -> Figure:
        self.figures.append(figure)
        ratio = f"  ({figure.ratio:.2f}x {figure.baseline_name})" if figure.ratio is not None else ""
        print(f"  {figure.group:<12} {figure.name:<48} {figure.value:>12.3f} {figure.unit}{ratio}", flush=True)
        return figure

    def write(self, directory: Path) -> tuple[Path, Path]:
        directory.mkdir(parents=True, exist_ok=True)
        meta = {"python": platform.python_version(), "machine": platform.machine(), "started": self.started}
        rows: list[dict[str, Any]] = [{**asdict(f), "ratio": f.ratio} for f in self.figures]
        json_path = directory / "report.json"
        json_path.write_text(json.dumps({"meta": meta, "figures": rows}, indent=2) + "\n")
        lines = [
            "| group | measurement | value | baseline | ratio | note |",
            "|---|---|---|---|---|---|",
        ]
        for f in self.figures:
            base = f"{f.baseline_value:.3f} {f.unit} ({f.baseline_name})" if f.baseline_value is not None else "—"
            ratio = f"{f.ratio:.2f}×" if f.ratio is not None else "—"
            lines.append(f"| {f.group} | {f.name} | {f.value:.3f} {f.unit} | {base} | {ratio} | {f.note} |")
        md_path = directory / "report.md"
        md_path.write_text("\n".join(lines) + "\n")
        return json_path, md_path


def time_sync(fn: Callable[[], object], repeat: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


async def time_async(fn: Callable[[], Awaitable[object]], repeat: int, warmup: int = 3) -> list[float]:
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return samples


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1_000_000
