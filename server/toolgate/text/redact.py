"""Take well-known secret shapes out of text before a model sees it. Pure: no I/O.

A tool result can carry a key the model should never hold: a `.env` file that was allowed after all, a
`git log -p` that shows a committed token, a config printed by a build tool. Each shape below is specific
enough that a match is almost surely a credential; the value is replaced by a marker naming its kind, and
the caller is told which kinds were found on which lines, so it can say that something was redacted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# (kind, pattern). Order matters where shapes overlap: the more specific first (sk-ant- before sk-).
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY"
            r"(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[A-Za-z0-9_-]{35}")),
)
# Text a shape's match must contain: a pattern runs only over text holding one of its hints (a substring test is
# far cheaper than a regex pass, and most results hold no secret at all).
_HINTS: dict[str, tuple[str, ...]] = {
    "private key": ("PRIVATE KEY",),
    "Anthropic API key": ("sk-ant-",),
    "OpenAI API key": ("sk-",),
    # The prefixes whole, not "gh": English is full of it ("through", "right"), and the pattern then ran over
    # most prose and code for nothing.
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "AWS access key id": ("AKIA", "ASIA", "ABIA", "ACCA"),
    "Slack token": ("xox",),
    "Google API key": ("AIza",),
}
# One character every match of a shape holds (its prefix has it), looked for before the hints: a single-character
# search is a memchr, while a longer hint is searched for at every place its first character occurs ("xox" in a
# file of x's). Text without "-", "_" or "A" (numbered lines of plain words) skips most shapes at once.
_NEEDS: dict[str, str] = {
    "private key": "-",  # -----BEGIN
    "Anthropic API key": "-",
    "OpenAI API key": "-",
    "GitHub token": "_",
    "AWS access key id": "A",
    "Slack token": "-",
    "Google API key": "A",
}
# Each shape with its character and hints, walked by plain loops in `redact`: a generator per shape cost more than
# the substring tests themselves on a result without secrets (every Read).
_HINTED: tuple[tuple[str, re.Pattern[str], str, tuple[str, ...]], ...] = tuple(
    (kind, pattern, _NEEDS[kind], _HINTS[kind]) for kind, pattern in _SHAPES
)
_MIN_KNOWN_CHARS = 8  # shorter "secrets" would redact ordinary words


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    found: tuple[tuple[str, int], ...]  # (kind, line number from 1) for each value taken out

    def note(self, where: str) -> str | None:
        """One sentence for the model saying what was taken out of `where`, or None when nothing was."""
        if not self.found:
            return None
        kinds = ", ".join(dict.fromkeys(kind for kind, _ in self.found))
        lines = sorted({line for _, line in self.found})
        shown = ", ".join(str(n) for n in lines[:10]) + (" and more" if len(lines) > 10 else "")
        count = len(self.found)
        return (
            f"[toolgate redacted {count} secret value{'s' if count > 1 else ''} ({kinds}) from {where}, on line"
            f"{'s' if len(lines) > 1 else ''} {shown}. The values are not available to you; ask the user if a task "
            "needs them.]"
        )


def redact(text: str, known_values: Iterable[str] = ()) -> Redacted:
    """`text` with every well-known token shape, and every value in `known_values` (the secrets of the
    environment commands were started from), replaced by `[REDACTED <kind>]`."""
    spans: list[tuple[int, int, str]] = []
    if known_values:  # usually an empty list: no set to build and sort
        for value in sorted({v for v in known_values if len(v) >= _MIN_KNOWN_CHARS}, key=len, reverse=True):
            start = text.find(value)
            while start != -1:
                spans.append((start, start + len(value), "secret from the environment"))
                start = text.find(value, start + len(value))
    for kind, pattern, needs, hints in _HINTED:
        if needs not in text:
            continue
        for hint in hints:
            if hint in text:
                spans.extend((m.start(), m.end(), kind) for m in pattern.finditer(text))
                break
    if not spans:
        return Redacted(text, ())
    pieces: list[str] = []
    found: list[tuple[str, int]] = []
    cursor = 0
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start < cursor:
            continue  # inside a value already taken out
        pieces.append(text[cursor:start])
        pieces.append(f"[REDACTED {kind}]")
        found.append((kind, text.count("\n", 0, start) + 1))
        cursor = end
    pieces.append(text[cursor:])
    return Redacted("".join(pieces), tuple(found))
