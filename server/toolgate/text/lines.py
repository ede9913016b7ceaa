"""Lines as editors and grep count them, and the `N<TAB>line` numbering Read shows."""

from __future__ import annotations

from collections.abc import Iterable


def split_lines(text: str) -> list[str]:
    """Split on LF only (not on \\v, \\f or U+2028, which `str.splitlines` would), dropping a CR before LF.

    A final newline ends the last line; it does not start an empty one: "a\\nb\\n" is two lines.
    """
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def number_lines(lines: Iterable[str], first: int) -> str:
    return "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, start=first))
