"""Gitignore-style path patterns for Read/Edit rules, compiled to regular expressions. Pure: no I/O.

A pattern is matched against a path *relative to the pattern's root* (the rule's settings project, the
home directory for `~/`, or `/` for `//`), with gitignore's meaning:

- a pattern with no slash (`*.env`, `secrets`) matches a name at any depth;
- a pattern with a leading `/` or `./`, or a slash in the middle (`src/*.py`), is anchored at the root;
- `*` and `?` never cross a `/`; `**` as a whole segment crosses any number of them; `[abc]` is a class;
- a pattern that matches a directory also matches everything inside it (`src` covers `src/app.py`).

Negation (`!`) is not supported: in a permission rule it would be a silent hole, so it is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


class PatternError(ValueError):
    """A path pattern that cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class PathPattern:
    text: str
    anchored: bool
    regex: re.Pattern[str]
    folded: re.Pattern[str]  # the same pattern, case-insensitive (used where matching more is the safe side)

    def matches(self, relative: str, *, ignore_case: bool = False) -> bool:
        """`relative` is a POSIX path relative to the root, without a leading `/`; "" is the root itself."""
        return (self.folded if ignore_case else self.regex).fullmatch(relative) is not None


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "\\" and i + 1 < len(segment):
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                raise PatternError(f"the character class starting at {segment[i:]!r} has no closing ']'")
            body = segment[i + 1 : end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            body = body.replace("\\", "\\\\")
            out.append(f"(?!/)[{body}]")
            i = end + 1
            continue
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def compile_pattern(text: str) -> PathPattern:
    """Compile one gitignore-style pattern (already stripped of any `//` or `~/` root prefix)."""
    if not text:
        raise PatternError("the path pattern is empty")
    if text.startswith("!"):
        raise PatternError("negated patterns ('!') cannot be used in permission rules; write a deny rule instead")
    if "\x00" in text:
        raise PatternError("the path pattern contains a NUL byte")
    body = text
    anchored = False
    if body.startswith("./"):
        body, anchored = body[2:], True
    while body.startswith("/"):
        body, anchored = body[1:], True
    body = body.rstrip("/") if body not in ("", "/") else ""
    if "/" in body:
        anchored = True  # gitignore: a slash before the end anchors the pattern
    segments = [s for s in body.split("/") if s not in ("", ".")] if body else []
    if any(s == ".." for s in segments):
        raise PatternError("'..' cannot appear in a path pattern; write the path from its root instead")

    while segments and segments[-1] == "**":
        segments = segments[:-1]  # a trailing `/**` means the directory and everything below it
    parts: list[str] = []
    for segment in segments:
        # `**` as a whole segment: zero or more directories.
        parts.append("(?:[^/]+/)*" if segment == "**" else _segment_regex(segment) + "/")
    core = "".join(parts)[:-1]  # every part ends with "/" (the last `**` was dropped above)
    if not segments:
        regex = ".*"  # "/", "./" or "**": everything under the root
    else:
        prefix = "" if anchored else "(?:[^/]+/)*"
        regex = f"{prefix}{core}(?:/.*)?"  # a pattern that names a directory covers everything below it
    return PathPattern(
        text=text,
        anchored=anchored,
        regex=re.compile(regex, re.DOTALL),
        folded=re.compile(regex, re.DOTALL | re.IGNORECASE),
    )
