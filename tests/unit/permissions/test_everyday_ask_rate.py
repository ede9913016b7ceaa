"""The hardening must not make ordinary work ask more. In default mode with no sandbox, the everyday read-only
commands (tests/fixtures/everyday_readonly.txt) ask at most 4 % of the time (issue 13 measured 4.3 %, issue 27
3.8 %), and the broader everyday development corpus (everyday_dev.txt: reading, searching, git, builds and
edits, read-only or not) at most 36 % (issue 27: 36.6 % before its stricter option models, 35.7 % after)."""

from __future__ import annotations

from pathlib import Path

from tests.unit.permissions.everyday import DEV_CORPUS, READ_ONLY_CORPUS, ask_rate

MAX_READ_ONLY_ASK_RATE = 0.04
MAX_DEV_ASK_RATE = 0.36


async def test_everyday_read_only_commands_rarely_ask(workspace: Path) -> None:
    measured = await ask_rate(READ_ONLY_CORPUS, workspace)
    assert measured.commands >= 300
    assert measured.rate <= MAX_READ_ONLY_ASK_RATE, f"{measured.rate:.1%} of everyday commands ask: {measured.asked}"


async def test_everyday_development_commands_ask_no_more_than_before(workspace: Path) -> None:
    measured = await ask_rate(DEV_CORPUS, workspace)
    assert measured.commands >= 500
    assert measured.rate <= MAX_DEV_ASK_RATE, f"{measured.rate:.1%} of development commands ask: {measured.asked}"
    # Writing, building and running tests still ask: the corpus is not all read-only.
    assert {"git push", "npm install", "rm -rf build", "pytest"} <= set(measured.asked)
