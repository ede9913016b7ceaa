"""The string replacement at the heart of Edit: find every occurrence, replace literally, explain misses.

Works on LF-normalised text. The replacement is literal (no `$1`, `\\1` or `$&` expansion): it is spliced
in by index, never passed through a regex engine.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from toolgate.text.quotes import fold_quotes, has_curly_quotes, restyle_quotes

_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t")
_MAX_SCANNED_LINES = 200_000
_MAX_PROBE_CHARS = 300


@dataclass(frozen=True, slots=True)
class Matches:
    """Where `old` occurs in the text (non-overlapping, in order), and whether quotes had to be folded."""

    spans: list[tuple[int, int]]
    quotes_folded: bool

    def __len__(self) -> int:
        return len(self.spans)


def _find_all(haystack: str, needle: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = haystack.find(needle)
    while start != -1:
        spans.append((start, start + len(needle)))
        start = haystack.find(needle, start + len(needle))
    return spans


def find_matches(text: str, old: str) -> Matches:
    """Exact occurrences of `old`; if there are none, occurrences once ‘ ’ “ ” are folded to ' and "."""
    if not old:
        return Matches([], False)
    spans = _find_all(text, old)
    if spans or not (has_curly_quotes(text) or has_curly_quotes(old)):
        return Matches(spans, False)
    return Matches(_find_all_folded(text, fold_quotes(old)), True)


# Shorter anchors hit too often for the windowed search to beat folding the whole text.
_MIN_ANCHOR_CHARS = 4


def _quote_free_anchor(folded: str) -> tuple[str, int]:
    """The longest piece of `folded` without a ' or ", and where it starts."""
    best, best_at, start = "", 0, 0
    for i, ch in enumerate(folded + "'"):
        if ch in "'\"":
            if i - start > len(best):
                best, best_at = folded[start:i], start
            start = i + 1
    return best, best_at


def _find_all_folded(text: str, folded_old: str) -> list[tuple[int, int]]:
    """`_find_all(fold_quotes(text), folded_old)` without folding all of `text` (megabytes, for a few matches).

    The longest quote-free piece of `folded_old` is found in `text` itself (folding maps only curly quotes,
    and only to quotes, so that piece occurs at the same indices in both), and only the window each hit
    implies is folded and compared. Candidates come in ascending order and one is kept only when it starts
    after the last kept match ends: the same leftmost, non-overlapping matches as the plain search.
    """
    anchor, offset = _quote_free_anchor(folded_old)
    if len(anchor) < _MIN_ANCHOR_CHARS:
        return _find_all(fold_quotes(text), folded_old)
    size = len(folded_old)
    spans: list[tuple[int, int]] = []
    hit = text.find(anchor, offset)
    while hit != -1:
        start = hit - offset
        if fold_quotes(text[start : start + size]) == folded_old:
            spans.append((start, start + size))
            hit = text.find(anchor, start + size + offset)
        else:
            hit = text.find(anchor, hit + 1)
    return spans


def line_of(text: str, index: int) -> int:
    """1-based line number of the character at `index`."""
    return text.count("\n", 0, index) + 1


def lines_of(text: str, indices: list[int]) -> list[int]:
    """1-based line numbers of ascending `indices`, counted in one pass."""
    numbers: list[int] = []
    line, pos = 1, 0
    for index in indices:
        line += text.count("\n", pos, index)
        pos = index
        numbers.append(line)
    return numbers


def replace_matches(text: str, matches: Matches, old: str, new: str) -> str:
    """Splice `new` into every match. With folded quotes, each replacement is re-styled to its match.

    Deleting whole lines (`new` empty, the match starting a line and ending just before a newline) also
    removes that newline, so no blank line is left behind. A deletion inside a line leaves the newline
    alone: eating it would join two lines.
    """
    if not matches.quotes_folded and (new or old.endswith("\n")):
        if len(matches.spans) == 1:
            # The one place is known: joining the two slices around it copies the text without searching it
            # again (str.replace looks for `old` twice before it copies; ~30% slower on a 5 MB file).
            [(start, end)] = matches.spans
            return "".join((text[:start], new, text[end:]))
        # The spans are the first occurrences of `old`, non-overlapping and in order, as str.replace finds
        # them, and nothing is restyled or eaten: one copy of the text instead of slices joined (three).
        return text.replace(old, new, len(matches.spans))
    pieces: list[str] = []
    pos = 0
    for start, end in matches.spans:
        replacement = new
        if matches.quotes_folded:
            before = text[start - 1] if start > 0 else ""
            after = text[end] if end < len(text) else ""
            replacement = restyle_quotes(old, text[start:end], new, before, after)
        stop = end
        if (
            not new
            and not old.endswith("\n")
            and end < len(text)
            and text[end] == "\n"
            and (start == 0 or text[start - 1] == "\n")
        ):
            stop = end + 1
        pieces.append(text[pos:start])
        pieces.append(replacement)
        pos = stop
    pieces.append(text[pos:])
    return "".join(pieces)


@dataclass(frozen=True, slots=True)
class MissHints:
    """What to tell a model whose `old_string` was not found."""

    closest: list[tuple[int, str]]  # (line number, line) most like the first line of old_string
    line_number_prefixes: bool  # old_string looks copied from Read output with its `N<TAB>` prefixes
    whitespace_only: bool  # old_string matches if runs of whitespace are ignored
    longer_than_text: bool


def explain_miss(text: str, old: str, limit: int = 3) -> MissHints:
    old_lines = [line for line in old.split("\n") if line.strip()]
    prefixes = bool(old_lines) and all(_LINE_NUMBER_PREFIX.match(line) for line in old_lines)
    squeezed_old = " ".join(fold_quotes(old).split())
    squeezed_text = " ".join(fold_quotes(text).split())
    if len(squeezed_old) > len(squeezed_text):
        return MissHints([], prefixes, False, True)
    whitespace_only = bool(squeezed_old) and squeezed_old in squeezed_text
    probe = old_lines[0].strip()[:_MAX_PROBE_CHARS] if old_lines else ""
    if prefixes:
        probe = _LINE_NUMBER_PREFIX.sub("", old_lines[0]).strip()[:_MAX_PROBE_CHARS]
    return MissHints(_closest_lines(text, probe, limit), prefixes, whitespace_only, False)


def _closest_lines(text: str, probe: str, limit: int, cutoff: float = 0.6) -> list[tuple[int, str]]:
    if not probe:
        return []
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(fold_quotes(probe))
    scored: list[tuple[float, int, str]] = []
    for number, line in enumerate(text.split("\n", _MAX_SCANNED_LINES)[:_MAX_SCANNED_LINES], start=1):
        candidate = fold_quotes(line.strip())[: _MAX_PROBE_CHARS * 2]
        if not candidate:
            continue
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff:
            continue
        ratio = matcher.ratio()
        if ratio >= cutoff:
            scored.append((ratio, number, line))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(number, line) for _, number, line in scored[:limit]]
