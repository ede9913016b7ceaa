"""A cheap token estimate: good enough to refuse a read that would flood the context window."""

from __future__ import annotations

import math

# JSON-like text tokenises worse (punctuation, short keys), so it counts double.
_DENSE_SUFFIXES = (".json", ".jsonl", ".jsonc", ".ndjson", ".geojson")


def estimate_tokens(text: str, name: str = "") -> int:
    chars_per_token = 2 if name.lower().endswith(_DENSE_SUFFIXES) else 4
    return math.ceil(len(text) / chars_per_token)
