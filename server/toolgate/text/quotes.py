"""Curly-quote tolerance for Edit: match ‘ ’ “ ” as ' and ", then write new text in the file's own style.

Models type straight quotes; files (prose, docs, UI strings) often hold typographic ones. When an Edit's
`old_string` only matches after folding the four curly quotes to ASCII, the match is mapped back to the
file's own characters and the replacement's quotes are re-styled to match, so the file's typography never
changes behind anyone's back. Folding is one character for one character, so every index found in the
folded text is also an index into the original.
"""

from __future__ import annotations

from typing import Literal

LEFT_SINGLE, RIGHT_SINGLE = "\u2018", "\u2019"
LEFT_DOUBLE, RIGHT_DOUBLE = "\u201c", "\u201d"


# After one of these (or at the start of the text), a quote opens; anywhere else it closes.
_OPENERS = frozenset(" \t\n\r([{\u2014\u2013" + LEFT_SINGLE + LEFT_DOUBLE + "\u00a0")

Style = Literal["straight", "curly", "mixed", "none"]


def fold_quotes(text: str) -> str:
    """‘ ’ → ' and “ ” → ", nothing else; the result has exactly the length of `text`."""
    # Four str.replace calls run in C at memory speed; str.translate with a table is ~20x slower on MBs.
    if not has_curly_quotes(text):
        return text
    return (
        text.replace(LEFT_SINGLE, "'").replace(RIGHT_SINGLE, "'").replace(LEFT_DOUBLE, '"').replace(RIGHT_DOUBLE, '"')
    )


def has_curly_quotes(text: str) -> bool:
    return LEFT_SINGLE in text or RIGHT_SINGLE in text or LEFT_DOUBLE in text or RIGHT_DOUBLE in text


def _style(chars: list[str], straight: str) -> Style:
    if not chars:
        return "none"
    curly = sum(1 for ch in chars if ch != straight)
    if curly == 0:
        return "straight"
    return "curly" if curly == len(chars) else "mixed"


def _curly(straight: str, prev: str, next_: str) -> str:
    if straight == '"':
        return LEFT_DOUBLE if prev == "" or prev in _OPENERS else RIGHT_DOUBLE
    if prev.isalpha() and next_.isalpha():
        return RIGHT_SINGLE  # an apostrophe: it's, l’homme
    return LEFT_SINGLE if prev == "" or prev in _OPENERS else RIGHT_SINGLE


def restyle_quotes(old: str, actual: str, new: str, before: str = "", after: str = "") -> str:
    """`new` with its quotes in the style `actual` (the file's text for the match of `old`) uses.

    `before` and `after` are the file's characters around the match, so that a quote at either end of
    `new` is judged by what really surrounds it. Per quote kind (single, double):
    - the match uses only curly quotes of that kind: straight ones in `new` become curly, opening or
      closing by context, an apostrophe between letters always ’;
    - it uses only straight ones (the model typed curly quotes the file does not have): curly ones in `new`
      become straight;
    - it mixes both: when `new` has as many quotes of that kind as `old`, the n-th takes the n-th's style;
      otherwise `new` is left as written (there is no honest guess);
    - it has none: `new` is left as written.
    """
    if old == actual:
        return new
    out = list(new)
    for straight, curly_pair in (('"', (LEFT_DOUBLE, RIGHT_DOUBLE)), ("'", (LEFT_SINGLE, RIGHT_SINGLE))):
        kind = (straight, *curly_pair)
        in_actual = [ch for ch in actual if ch in kind]
        positions = [i for i, ch in enumerate(out) if ch in kind]
        style = _style(in_actual, straight)
        if style == "none" or not positions:
            continue
        if style == "mixed":
            if len(positions) != len(in_actual):
                continue
            wanted_curly = [ch != straight for ch in in_actual]
        else:
            wanted_curly = [style == "curly"] * len(positions)
        for i, curly in zip(positions, wanted_curly, strict=True):
            if curly:
                prev = out[i - 1] if i > 0 else before
                nxt = out[i + 1] if i + 1 < len(out) else after
                out[i] = _curly(straight, prev, nxt) if out[i] == straight else out[i]
            else:
                out[i] = straight
    return "".join(out)


def shown_quoted(text: str) -> str:
    """A pattern in quotes for a person to read, exactly as typed: `repr` would double every backslash of a
    regex (`'\\\\d+'`), so the quote is chosen to differ from the text's own instead and nothing is escaped."""
    quote = '"' if "'" in text and '"' not in text else "'"
    return f"{quote}{text}{quote}"
