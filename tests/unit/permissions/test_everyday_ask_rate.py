"""The hardening must not make ordinary work ask more: everyday read-only commands (tests/fixtures/
everyday_readonly.txt) are asked about at most 10 % of the time in default mode (issue 13; 4.3 % when measured)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.permissions.helpers import bash, make_runtime

CORPUS = Path(__file__).parents[2] / "fixtures" / "everyday_readonly.txt"
FILES = [
    "README.md", "src/main.py", "pyproject.toml", "package.json", "src/app/models.py", "tests/test_api.py",
    "Makefile", "docs/index.md", "setup.cfg", "src/lib.rs", "data.csv", "a.txt", "b.txt",
]  # fmt: skip
MAX_ASK_RATE = 0.10


async def test_everyday_read_only_commands_rarely_ask(workspace: Path) -> None:
    commands = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    assert len(commands) >= 300
    for name in FILES:
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("x\n")
    rt = make_runtime(workspace)
    try:
        asked = [c for c in commands if (await bash(rt, c)).decision != "allow"]
    finally:
        await rt.aclose()
    rate = len(asked) / len(commands)
    assert rate <= MAX_ASK_RATE, f"{rate:.1%} of everyday commands ask: {asked}"
