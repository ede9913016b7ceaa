"""Bash brace expansion of one word, for checking the paths a command will really name. Pure: no I/O.

`src/{a,../../etc/passwd}` is two paths to bash, `src/a` and `src/../../etc/passwd`; judging the word as one
path would miss the second. Sequences (`{1..3}`, `{a..c}`) expand too. The number of words is capped; past the
cap the caller treats the word as unknown (it fails closed).
"""

from __future__ import annotations

MAX_WORDS = 256


def _split_alternatives(body: str) -> list[str] | None:
    """`a,b{c,d},e` → ["a", "b{c,d}", "e"]; None when there is no top-level comma."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:index])
            start = index + 1
    if not parts:
        return None
    parts.append(body[start:])
    return parts


def _sequence(body: str) -> list[str] | None:
    pieces = body.split("..")
    if len(pieces) not in (2, 3):
        return None
    first, last = pieces[0], pieces[1]
    step = int(pieces[2]) if len(pieces) == 3 and pieces[2].lstrip("-").isdigit() else 1
    step = abs(step) or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step > MAX_WORDS:
            return []  # a sequence, but too long to check
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v) for v in values]
    if len(first) == 1 and len(last) == 1 and first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in values]
    return None


def expand_braces(word: str) -> list[str] | None:
    """Every word bash makes of `word` by brace expansion (the word itself when it has none), or None when
    there would be more than MAX_WORDS. Quoting is not seen here: a caller that cannot tell quoted braces
    apart checks these words as well as the word itself."""
    depth, open_at = 0, -1
    for index, char in enumerate(word):
        if char == "\\":
            continue
        if char == "{" and not (index and word[index - 1] == "$"):
            if depth == 0:
                open_at = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                body = word[open_at + 1 : index]
                options = _split_alternatives(body) or _sequence(body)
                if options is None:
                    continue  # `{x}` or `{}` is literal; look for a later group
                if not options:
                    return None
                prefix, suffix = word[:open_at], word[index + 1 :]
                results: list[str] = []
                for option in options:
                    tails = expand_braces(prefix + option + suffix)
                    if tails is None:
                        return None
                    results.extend(tails)
                    if len(results) > MAX_WORDS:
                        return None
                return results
    return [word]
