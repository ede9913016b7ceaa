"""Words as bash reads them, from raw text and its quoting scan (toolgate.bash.quoting): the value of one word after
quote removal (`word_value`), with what in it bash expands at run time (parameters, commands, patterns, a tilde);
the decoding of `$'…'` strings (`decode_ansi_c`); and the `${…}` expansions in a text (`braced_expansions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolgate.bash.quoting import CODE, DOUBLE, ESCAPED, QUOTE, SINGLE, scan

_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def decode_ansi_c(content: str) -> str:
    """The value of a `$'…'` string's content, as bash computes it."""
    out: list[str] = []
    i, n = 0, len(content)
    while i < n:
        ch = content[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        esc = content[i + 1]
        if esc in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[esc])
            i += 2
        elif esc in "01234567":
            j = i + 1
            while j < n and j < i + 4 and content[j] in "01234567":
                j += 1
            out.append(chr(int(content[i + 1 : j], 8) & 0xFF))
            i = j
        elif esc in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[esc]
            j = i + 2
            while j < n and j < i + 2 + width and content[j] in "0123456789abcdefABCDEF":
                j += 1
            if j == i + 2:
                out.append("\\" + esc)
            else:
                code = int(content[i + 2 : j], 16)
                out.append(chr(code) if code <= 0x10FFFF else "\ufffd")
            i = j
        elif esc == "c" and i + 2 < n:
            out.append(chr(ord(content[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + esc)
            i += 2
    return "".join(out)


@dataclass(frozen=True, slots=True)
class WordValue:
    value: str  # the word after quote removal; expansions are kept as written
    expansion: bool  # $name, ${…}, $(…), `…`, $((…)): the value is only known when it runs
    pattern: bool  # unquoted *, ?, [ or a brace expansion {a,b} / {1..3}: becomes other words
    tilde: bool  # starts with an unquoted ~ or ~/ (the home directory)
    other_tilde: bool  # ~user, ~+, ~-: somebody else's home or a directory stack entry


def _brace_expansion(raw: str, mask: str) -> bool:
    """An unquoted {…} holding a top-level comma or `..`, which bash expands into several words."""
    depth_start: list[int] = []
    for k, ch in enumerate(raw):
        if mask[k] != CODE:
            continue
        if ch == "{" and not (k > 0 and raw[k - 1] == "$"):
            depth_start.append(k)
        elif ch == "}" and depth_start:
            start = depth_start.pop()
            inner = [raw[m] for m in range(start + 1, k) if mask[m] == CODE]
            body = "".join(inner)
            if "," in body or ".." in body:
                return True
    return False


# A word with none of these is its own value, with no expansion, pattern or tilde: most words of most
# commands (`git`, `status`, `--oneline`, `src/app.py`). Every character that can start a quote, an
# escape, an expansion, a pattern, a comment or a redirection is listed, so the full scan decides the rest.
_PLAIN_WORD = re.compile(r"[^\\'\"$`()<>#{}\[\]*?@+!~\n]*")


def word_value(raw: str) -> WordValue:
    """Quote removal for one word as written (the text of a bashlex word node)."""
    if _PLAIN_WORD.fullmatch(raw):
        return WordValue(raw, False, False, False, False)
    return _scanned_word_value(raw)


def _scanned_word_value(raw: str) -> WordValue:
    info = scan(raw)
    mask = info.mask
    out: list[str] = []
    expansion = pattern = False
    ansi = {s.span[0]: s for s in info.ansi_strings}
    i, n = 0, len(raw)
    while i < n:
        ch, code = raw[i], mask[i]
        if i in ansi and ansi[i].kind == "ansi-c":
            string = ansi[i]
            out.append(decode_ansi_c(string.content))
            i = string.span[1]
            continue
        if code == QUOTE:
            expansion = expansion or ch == "`"
            i += 2 if raw.startswith(('$"', "$'"), i) else 1
            continue
        if code == ESCAPED:
            # A backslash and the character it escapes: the character, literally (a line continuation vanishes).
            if ch == "\\" and i + 1 < n:
                if raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            out.append(ch)  # a lone backslash at the very end stays itself
            i += 1
            continue
        if code == DOUBLE:
            if ch == "$" and i + 1 < n and (raw[i + 1].isalnum() or raw[i + 1] in "_@*#?$!-"):
                expansion = True
            if ch == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
                if raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            out.append(ch)
            i += 1
            continue
        if code == SINGLE:
            out.append(ch)
            i += 1
            continue
        # CODE (unquoted, or inside an expansion)
        if (ch == "$" and i + 1 < n and (raw[i + 1].isalnum() or raw[i + 1] in "_{(@*#?$!-")) or ch == "`":
            expansion = True
        elif ch in "*?" and not _inside_expansion(raw, mask, i):
            pattern = True
        elif ch == "[" and "]" in raw[i + 2 :] and not _inside_expansion(raw, mask, i):
            pattern = True  # a bracket expression needs its closing ] (`[` alone is the test command)
        elif ch in "@+!" and i + 1 < n and raw[i + 1] == "(" and mask[i + 1] == CODE:
            pattern = True  # extglob
        out.append(ch)
        i += 1
    pattern = pattern or _brace_expansion(raw, mask)
    tilde = other = False
    if raw.startswith("~") and mask[:1] == CODE:
        user = raw[1:].split("/", 1)[0]
        if user == "":
            tilde = True
        else:
            other = True
    return WordValue("".join(out), expansion, pattern, tilde, other)


def _inside_expansion(raw: str, mask: str, index: int) -> bool:
    """Is raw[index] inside a ${…}, $(…) or $((…)) (where * and ? are not file-name patterns of this word)?"""
    depth = 0
    k = 0
    while k < index:
        if mask[k] == CODE and raw.startswith(("${", "$("), k):
            depth += 1
            k += 2
            continue
        if mask[k] == CODE and raw[k] in ")}" and depth:
            depth -= 1
        k += 1
    return depth > 0


def braced_expansions(text: str, mask: str | None = None) -> list[str]:
    """The inside of every ${…} in `text`, nested ones included (outermost first).

    With a mask (from `scan`), only expansions bash performs are returned (not those in single quotes).
    Braces are matched by depth, so ${x:-${y}} yields "x:-${y}" and then "y".
    """
    found: list[str] = []
    i, n = 0, len(text)
    while i < n - 1:
        if text.startswith("${", i) and (mask is None or mask[i] == CODE) and not (i and text[i - 1] == "\\"):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("${", j):
                    depth += 1
                    j += 2
                    continue
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "}":
                    depth -= 1
                j += 1
            inner = text[i + 2 : j - 1] if depth == 0 else text[i + 2 :]
            found.append(inner)
            found.extend(braced_expansions(inner))
            i = j
            continue
        i += 1
    return found
