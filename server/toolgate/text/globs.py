"""Glob patterns as Glob and Grep read them: splitting, translating to a regex, and finding a cheap prefilter.

Syntax: `*` (any run of characters except `/`), `?` (one character except `/`), `**` (any number of whole
directories), `[abc]` / `[!abc]` (one character from / not from a set), `{a,b}` (alternatives, may nest) and
`\\x` (a literal x). A `[` or `{` that is never closed is an ordinary character.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_MAGIC = frozenset("*?[{\\")


def has_magic(text: str) -> bool:
    return any(c in _MAGIC for c in text)


def _segments(pattern: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each `/`-separated segment, not splitting inside `{…}` or `[…]`."""
    depth = 0
    start = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            close = _class_end(pattern, i)
            if close is not None:
                i = close + 1
                continue
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        elif c == "/" and depth == 0:
            yield start, i
            start = i + 1
        i += 1
    yield start, len(pattern)


def split_static_prefix(pattern: str) -> tuple[str, str]:
    """The leading directories without glob characters, and the rest of the pattern.

    `src/app/**/*.ts` → (`src/app`, `**/*.ts`); `/abs/x/*.py` → (`/abs/x`, `*.py`); `*.py` → (``, `*.py`);
    a pattern with no glob characters at all names a file: `docs/a.md` → (`docs`, `a.md`).
    """
    bounds = list(_segments(pattern))
    static = 0
    for index, (start, end) in enumerate(bounds[:-1]):
        if has_magic(pattern[start:end]):
            break
        static = index + 1
    if static == 0:
        return "", pattern
    prefix_end = bounds[static - 1][1]
    prefix = pattern[:prefix_end] or "/"  # a pattern such as "/x.py" keeps its root
    return prefix, pattern[bounds[static][0] :]


def split_glob_list(text: str) -> list[str]:
    """Several globs in one string: separated by whitespace or commas, except commas inside `{…}`."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for c in text:
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        if (c.isspace() or c == ",") and depth == 0:
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(c)
    if current:
        out.append("".join(current))
    return out


def _class_end(pattern: str, start: int) -> int | None:
    """Index of the `]` closing the class opened at `start`, or None when it is never closed."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a `]` first in the set is a member, not the end
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return None


def brace_end(pattern: str, start: int) -> int | None:
    depth = 0
    i = start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def split_alternatives(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    return parts


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and pattern.startswith("**/", i):
                    out.append("(?:.*/)?")
                    i += 3
                    continue
                if at_start and i + 2 == n:
                    out.append(".*")
                    i += 2
                    continue
                i += 1  # `a**b`: two stars inside a name mean the same as one
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            close = _class_end(pattern, i)
            if close is None:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : close]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                members = re.sub(r"\\(.)", r"\1", body).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
                members = members.replace("^", "\\^")
                out.append(f"[^/{members}]" if negate else f"[{members}]")
                i = close
        elif c == "{":
            close = brace_end(pattern, i)
            if close is None:
                out.append(re.escape(c))
            else:
                options = split_alternatives(pattern[i + 1 : close])
                out.append("(?:" + "|".join(_translate(o) for o in options) + ")")
                i = close
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(pattern: str, *, basename_if_no_slash: bool) -> re.Pattern[str]:
    """A regex that full-matches the relative paths (with `/` separators) the glob selects.

    With `basename_if_no_slash` (the rule of .gitignore and of ripgrep's `--glob`), a pattern without a `/`
    matches a file name at any depth: `*.py` selects `a.py` and `src/b.py`. Without it, the pattern is
    anchored at the search directory as a shell would read it: `*.py` selects only `a.py`. A leading `/`
    anchors either way; a trailing `/` selects everything under the directory.
    """
    text = pattern
    while text.startswith("./"):
        text = text[2:]
    anchored = text.startswith("/")
    text = text.lstrip("/")
    if text.endswith("/"):
        text += "**"
    body = _translate(text)
    if basename_if_no_slash and not anchored and "/" not in text:
        body = "(?:.*/)?" + body
    return re.compile(body, re.DOTALL)


def basename_prefilter(pattern: str) -> str | None:
    """The pattern's last segment, when it is a plain file-name glob that ripgrep can filter on by itself.

    ripgrep's `--glob` whitelist overrides .gitignore, so Glob and Grep narrow ripgrep's walk with a file
    type made of this glob instead (types honour .gitignore) and match the full pattern themselves. None
    when the last segment cannot serve (`**`, a directory pattern, escapes, unbalanced brackets) or ripgrep
    reads its braces differently: it drops empty alternatives (`a{x,}` selects `ax` but not `a`) and refuses
    nested ones. tests/unit/tools/test_glob_properties.py holds Glob's listing to the full matcher.
    """
    if pattern.endswith("/"):
        return None
    *_, (start, end) = _segments(pattern)
    segment = pattern[start:end]
    if not segment or "**" in segment or "\\" in segment or "/" in segment:
        return None
    if segment.count("{") != segment.count("}") or segment.count("[") != segment.count("]"):
        return None
    return segment if _alternatives_read_alike(segment) else None


def _alternatives_read_alike(segment: str) -> bool:
    """No `{…}` nests, and none has an empty alternative. (Braces inside `[…]` count too: a false "no" only
    means the full matcher decides, never a wrong listing.)"""
    depth = 0
    previous = ""
    for c in segment:
        if c == "{":
            depth += 1
            if depth > 1:
                return False
        elif c in ",}" and depth:
            if previous in ("{", ","):
                return False
            depth -= c == "}"
        previous = c
    return True
