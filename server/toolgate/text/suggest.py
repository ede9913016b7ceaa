"""'Did you mean …?' for names that do not exist."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def _stem(name: str) -> str:
    head, dot, _ = name.rpartition(".")
    return head if dot and head else name


def closest_names(wanted: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Best guesses first: same name in another case, same stem with another extension, then similar names."""
    pool = sorted(set(candidates))
    found: list[str] = []

    def add(name: str) -> None:
        if name != wanted and name not in found:
            found.append(name)

    for name in pool:
        if name.lower() == wanted.lower():
            add(name)
    for name in pool:
        if _stem(name) == _stem(wanted) and name != wanted:
            add(name)
    for name in difflib.get_close_matches(wanted, pool, n=limit, cutoff=0.75):
        add(name)
    return found[:limit]
