"""A position in a document named the way a model can name it: a symbol and the text of its line.

Models count columns badly (tabs, wide characters, off-by-one), and they lose track of line numbers after edits;
they copy lines well. So a position is found from `symbol` (the name as written) and `line_text` (the line it
is on, as Read shows it, leading and trailing whitespace not significant), with an optional 1-based `line` to
choose between lines that read alike and an optional 1-based `occurrence` to choose between several uses of the
name on one line. Whatever cannot be decided is an error that lists the candidates, never a guess.

The answer is an LSP position: a 0-based line and a `character` in UTF-16 code units (what VS Code counts), plus
the column in code points for showing it. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the LSP line rule: nothing else breaks a line
_WORD = re.compile(r"[\w$]")  # identifier characters in the common languages (`$` for JavaScript)
MAX_LISTED = 10


class PositionError(ValueError):
    """The symbol could not be placed; the message says why and lists what was found."""


@dataclass(frozen=True, slots=True)
class SymbolPosition:
    line: int  # 0-based
    character: int  # UTF-16 code units from the line's start (LSP)
    column: int  # code points from the line's start


def split_lines(text: str) -> list[str]:
    """The lines of `text` by the LSP rule (`\\n`, `\\r\\n`, `\\r`), without their breaks."""
    return _LINE_BREAK.split(text)


def utf16_units(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def occurrences(line: str, symbol: str) -> list[int]:
    """Where `symbol` starts in `line`: as a whole word when it occurs as one, otherwise anywhere."""
    starts = [m.start() for m in re.finditer(re.escape(symbol), line)]
    whole = [s for s in starts if _bounded(line, s, len(symbol), symbol)]
    return whole or starts


def _bounded(line: str, start: int, size: int, symbol: str) -> bool:
    # A boundary matters only where the symbol itself starts or ends with an identifier character.
    before_ok = start == 0 or not _WORD.match(symbol[0]) or not _WORD.match(line[start - 1])
    end = start + size
    after_ok = end == len(line) or not _WORD.match(symbol[-1]) or not _WORD.match(line[end])
    return before_ok and after_ok


def locate_symbol(
    text: str, symbol: str, line_text: str | None, line: int | None = None, occurrence: int | None = None
) -> SymbolPosition:
    """The position of `symbol` on the line that reads `line_text` (see the module docstring)."""
    if not symbol or symbol.strip() != symbol or "\n" in symbol or "\r" in symbol:
        raise PositionError(
            "symbol must be the name itself as it is written in the file: not empty, on one line, with no "
            "surrounding whitespace."
        )
    lines = split_lines(text)
    index = _choose_line(lines, symbol, line_text, line)
    found = occurrences(lines[index], symbol)
    if not found:
        raise PositionError(
            f"Line {index + 1} reads {lines[index].strip()!r} but does not contain {symbol!r}. Give the symbol "
            "exactly as it is written on that line."
        )
    if occurrence is not None:
        if not 1 <= occurrence <= len(found):
            raise PositionError(
                f"{symbol!r} occurs {len(found)} time{'s' if len(found) != 1 else ''} on line {index + 1}, so "
                f"occurrence {occurrence} does not exist; use a number from 1 to {len(found)}."
            )
        start = found[occurrence - 1]
    elif len(found) > 1:
        marked = _marked(lines[index], found)
        raise PositionError(
            f"{symbol!r} occurs {len(found)} times on line {index + 1}:\n{marked}\nSet occurrence to the one "
            f"you mean (1 to {len(found)}, counted from the left)."
        )
    else:
        start = found[0]
    return SymbolPosition(index, utf16_units(lines[index][:start]), start)


def _choose_line(lines: list[str], symbol: str, line_text: str | None, line: int | None) -> int:
    if line is not None and not 1 <= line <= len(lines):
        raise PositionError(f"line {line} is outside the file, which has {len(lines)} lines (they count from 1).")
    if line_text is None:
        candidates = [i for i, text in enumerate(lines) if occurrences(text, symbol)]
        what = f"containing {symbol!r}"
    else:
        wanted = line_text.strip()
        if not wanted or "\n" in wanted or "\r" in wanted:
            raise PositionError("line_text must be the text of one line of the file (copied from Read, no number).")
        candidates = [i for i, text in enumerate(lines) if text.strip() == wanted]
        # A line given in part still names it, as long as it names one: a model often leaves a long line's tail off.
        if not candidates:
            candidates = [i for i, text in enumerate(lines) if wanted in text]
        what = f"reading {wanted!r}"
    if line is not None and (line - 1) in candidates:
        return line - 1
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        elsewhere = [i for i, text in enumerate(lines) if occurrences(text, symbol)]
        hint = (
            f" {symbol!r} does occur on:\n{_listed(lines, elsewhere)}\nCopy the line_text from one of these."
            if elsewhere and line_text is not None
            else " Read the file and copy the line exactly (without the line number)."
        )
        raise PositionError(f"No line of the file is {what}.{hint}")
    near = f"; line {line} is not one of them" if line is not None else ""
    raise PositionError(
        f"{len(candidates)} lines are {what}{near}:\n{_listed(lines, candidates)}\nAdd `line` (the number shown "
        "before the one you mean) to choose."
    )


def _listed(lines: list[str], indexes: list[int]) -> str:
    shown = [f"{i + 1}\t{lines[i].strip()}" for i in indexes[:MAX_LISTED]]
    if len(indexes) > MAX_LISTED:
        shown.append(f"... and {len(indexes) - MAX_LISTED} more")
    return "\n".join(shown)


def _marked(text: str, starts: list[int]) -> str:
    """The line with each occurrence numbered under it, so the model can count without columns."""
    marks = [" "] * len(text)
    for number, start in enumerate(starts, 1):
        label = str(number)
        for offset, char in enumerate(label):
            if start + offset < len(marks):
                marks[start + offset] = char
    return f"{text}\n{''.join(marks).rstrip()}"
