"""The everyday command corpora (tests/fixtures/everyday_*.txt) and their ask rate in default mode with no
sandbox: how often a person would be asked about ordinary work. Shared by test_everyday_ask_rate.py and
bench/bench_permissions.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.unit.permissions.helpers import bash, make_runtime

FIXTURES = Path(__file__).parents[2] / "fixtures"
READ_ONLY_CORPUS = FIXTURES / "everyday_readonly.txt"
DEV_CORPUS = FIXTURES / "everyday_dev.txt"
# The files the corpora name, so that reads of them resolve to real files in the workspace.
FILES = [
    "README.md", "src/main.py", "pyproject.toml", "package.json", "src/app/models.py", "tests/test_api.py",
    "Makefile", "docs/index.md", "setup.cfg", "src/lib.rs", "data.csv", "a.txt", "b.txt", "src/index.ts",
    "tsconfig.json", "CHANGELOG.md", "go.mod", "Cargo.toml", "src/components/App.tsx", "logs/app.log",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class AskRate:
    commands: int
    asked: tuple[str, ...]

    @property
    def rate(self) -> float:
        return len(self.asked) / self.commands


def commands(corpus: Path) -> list[str]:
    lines = corpus.read_text(encoding="utf-8").splitlines()
    return [line.replace("\\n", "\n") for line in lines if line and not line.startswith("#")]


async def ask_rate(corpus: Path, workspace: Path) -> AskRate:
    """Every command of `corpus` decided in default mode (no rules, no sandbox) in a workspace holding FILES."""
    for name in FILES:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x\n")
    listed = commands(corpus)
    rt = make_runtime(workspace)
    try:
        asked = tuple([c for c in listed if (await bash(rt, c)).decision != "allow"])
    finally:
        await rt.aclose()
    return AskRate(len(listed), asked)
