"""Bash pathname patterns compared with each other: could some name match both?

`overlaps("id_*", "id_rsa")` and `overlaps(".en[v]", ".env")` are true, `overlaps("*.py", ".env")` is not
(bash's `*` does not match a leading dot unless dotglob is set). Used to see a credential file behind a word
such as `~/.ss?/id_*`: the credential names are patterns too (`.env.*`), so the question is whether two
patterns intersect, answered exactly for `*`, `?` and `[…]` by a walk over both at once.

Anything this module does not model (extglob groups, POSIX classes, unclosed brackets' neighbours) is read
as "could match anything" in that position: the caller asks a person rather than miss a credential file.
Matching is case-insensitive (folded) because the file systems and loaders it guards often are.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["STAR", "CharSet", "has_pattern", "overlaps", "tokens"]

_MAGIC = frozenset("*?[")
_EXTGLOB_OPENERS = frozenset("?*+@!")
_MAX_RANGE = 512  # a wider range ([!-~] is fine, [a-\uffff] is not) is read as "any character"


@dataclass(frozen=True, slots=True)
class CharSet:
    """One character position: from `chars`, or (negated) any character not in them."""

    chars: frozenset[str]
    negated: bool = False

    def overlaps(self, other: CharSet) -> bool:
        if not self.negated and not other.negated:
            return bool(self.chars & other.chars)
        if self.negated and other.negated:
            return True  # the alphabet is larger than any two finite sets
        positive, negative = (self, other) if other.negated else (other, self)
        return bool(positive.chars - negative.chars)

    def matches_dot(self) -> bool:
        """Can this position match a leading `.`? Only a literal dot (or a class naming one) can, in bash."""
        return not self.negated and "." in self.chars


STAR = CharSet(frozenset(), True)  # a stand-in object: identity marks `*` (zero or more characters)
_ANY = CharSet(frozenset(), True)  # `?` and anything unmodelled: exactly one character, any


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def has_pattern(text: str) -> bool:
    """Does bash treat this word as a pattern (an unescaped `*`, `?` or `[`)?"""
    if "*" not in text and "?" not in text and "[" not in text:
        return False  # almost every word and path: three scans at C speed instead of a Python loop per character
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in _MAGIC:
            return True
    return False


def _bracket(segment: str, start: int) -> tuple[CharSet, int] | None:
    """The class that opens at `segment[start]` (`[`), and the index after its `]`; None if never closed."""
    i = start + 1
    negated = i < len(segment) and segment[i] in "!^"
    if negated:
        i += 1
    chars: set[str] = set()
    first = True
    while i < len(segment):
        ch = segment[i]
        if ch == "]" and not first:
            return CharSet(frozenset(_fold("".join(chars))), negated), i + 1
        first = False
        if ch == "[" and i + 1 < len(segment) and segment[i + 1] in ":=.":
            close = segment.find(segment[i + 1] + "]", i + 2)
            if close < 0:
                return None
            return _class_rest(segment, close + 2, negated)
        if ch == "\\" and i + 1 < len(segment):
            i += 1
            ch = segment[i]
        if i + 2 < len(segment) and segment[i + 1] == "-" and segment[i + 2] != "]":
            low, high = ord(ch), ord(segment[i + 2])
            if high - low > _MAX_RANGE:
                return _class_rest(segment, i + 3, negated)
            chars.update(chr(c) for c in range(low, high + 1))
            i += 3
            continue
        chars.add(ch)
        i += 1
    return None


def _class_rest(segment: str, i: int, negated: bool) -> tuple[CharSet, int] | None:
    """A class with a part this module does not model ([:alpha:], a huge range): any character, to its end."""
    close = segment.find("]", i)
    return (_ANY, close + 1) if close >= 0 else None


@lru_cache(maxsize=1024)
def tokens(segment: str) -> tuple[CharSet, ...]:
    """One path segment of a bash pattern as positions: STAR, or a CharSet for one character."""
    if any(segment[i] in _EXTGLOB_OPENERS and segment[i + 1] == "(" for i in range(len(segment) - 1)):
        return (STAR,)  # an extglob group: anything (this module does not model them)
    out: list[CharSet] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            if not out or out[-1] is not STAR:
                out.append(STAR)
            i += 1
        elif ch == "?":
            out.append(_ANY)
            i += 1
        elif ch == "[" and (found := _bracket(segment, i)) is not None:
            out.append(found[0])
            i = found[1]
        else:
            if ch == "\\" and i + 1 < len(segment):
                i += 1
                ch = segment[i]
            out.append(CharSet(frozenset(_fold(ch))))
            i += 1
    return tuple(out)


def _intersect(a: tuple[CharSet, ...], b: tuple[CharSet, ...]) -> bool:
    """Is there a string both position lists match? (A walk over both, remembering pairs already seen.)"""
    seen: set[tuple[int, int]] = set()
    stack = [(0, 0)]
    while stack:
        i, j = stack.pop()
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if i == len(a) and j == len(b):
            return True
        a_star = i < len(a) and a[i] is STAR
        b_star = j < len(b) and b[j] is STAR
        if a_star:
            stack.append((i + 1, j))  # the star matches nothing more
            if j < len(b):
                stack.append((i, j + 1))  # the star takes b's next position (or b's star takes nothing)
        if b_star:
            stack.append((i, j + 1))
            if i < len(a):
                stack.append((i + 1, j))
        if not a_star and not b_star and i < len(a) and j < len(b) and a[i].overlaps(b[j]):
            stack.append((i + 1, j + 1))
    return False


def overlaps(pattern: str, name: str, *, dotglob: bool = False) -> bool:
    """Could one file name match both the bash pattern `pattern` and the pattern `name` (one path segment each)?

    A name that starts with `.` is only matched by a pattern that starts with a literal dot, as bash does
    unless `dotglob` is set; `.` and `..` never match a pattern that does not spell them."""
    a, b = tokens(pattern), tokens(name)
    if name.startswith(".") and not dotglob and not (a and a[0] is not STAR and a[0].matches_dot()):
        return False
    return _intersect(a, b)
