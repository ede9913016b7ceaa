"""The benchmark corpus doubles as a test: 1,000 realistic agent commands, each labelled read-only or not."""

from __future__ import annotations

import json
from pathlib import Path

from toolgate.bash.classify import classify_uncached

CORPUS = Path(__file__).parents[3] / "bench" / "data" / "commands.jsonl"


def test_every_corpus_command_gets_its_labelled_verdict() -> None:
    entries = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(entries) == 1000
    assert len({e["command"] for e in entries}) == 1000
    wrong = [
        (e["command"], e["read_only"], result.reason)
        for e in entries
        if (result := classify_uncached(e["command"])).read_only != e["read_only"]
    ]
    assert wrong == []
    assert 0.3 < sum(e["read_only"] for e in entries) / len(entries) < 0.8
