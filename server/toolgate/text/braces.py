"""Bash brace expansion of one word, for checking the paths a command will really name. Pure: no I/O.

`src/{a,../../etc/passwd}` is two paths to bash, `src/a` and `src/../../etc/passwd`; judging the word as one
path would miss the second. Sequences (`{1..3}`, `{a..c}`) expand too. The number of words is capped; past the
cap the caller treats the word as unknown (it fails closed).
"""

from __future__ import annotations

from toolgate.text.globs import brace_end, split_alternatives

MAX_WORDS = 256


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
    search = 0
    while (open_at := word.find("{", search)) != -1:
        close = brace_end(word, open_at)
        if close is None:
            return [word]
        search = open_at + 1
        if open_at and word[open_at - 1] in "$\\":
            continue  # ${name} is a parameter, \{ a literal brace
        body = word[open_at + 1 : close]
        alternatives = split_alternatives(body)
        options = alternatives if len(alternatives) > 1 else _sequence(body)
        if options is None:
            continue  # `{x}` or `{}` is literal; look for a later group
        if not options:
            return None
        prefix, suffix = word[:open_at], word[close + 1 :]
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
