"""A quote-aware scan of raw shell text: for every character, the quoting context bash would read it in.

bashlex tells us the structure of a command, but it drops what the security checks and the word analysis
need to know: was this `*` quoted, is this space inside a string, where does a here-document body start,
which `$'…'` strings are there. This scanner answers those questions from the raw text alone. It is pure
and never raises: text bash would reject (an unterminated quote) is reported, not guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Context codes, one per character of the scanned text.
CODE = "c"  # unquoted shell code: operators, words, whitespace
QUOTE = "q"  # a quoting character itself: ' " ` and the $ of $' / $"
SINGLE = "s"  # inside '…' or $'…' (literal)
DOUBLE = "d"  # inside "…" (literal part; $ and ` start nested contexts)
ESCAPED = "e"  # a backslash outside quotes and the character it escapes
HEREDOC = "h"  # a here-document body, including its terminating line
COMMENT = "m"  # a comment, from # to the end of the line

_METACHARS = " \t\n;&|()<>"
_WORD_BREAK_BEFORE_COMMENT = " \t\n;&|()<>"


@dataclass(frozen=True, slots=True)
class Heredoc:
    operator_start: int  # index of the first `<` of `<<` / `<<-`
    delimiter: str  # after quote removal
    delimiter_span: tuple[int, int]  # the delimiter word as written
    quoted: bool  # a quoted delimiter means the body is literal (no expansion)
    strip_tabs: bool  # `<<-`
    body_span: tuple[int, int] | None  # the body text, without the terminating line (None: never reached)
    terminated: bool


@dataclass(frozen=True, slots=True)
class AnsiString:
    """A `$'…'` (ANSI-C) or `$"…"` (locale) string: span of the whole string, and its content as written."""

    kind: str  # "ansi-c" or "locale"
    span: tuple[int, int]
    content: str


@dataclass(slots=True)
class Scan:
    text: str
    mask: str
    heredocs: list[Heredoc] = field(default_factory=list)
    ansi_strings: list[AnsiString] = field(default_factory=list)
    # Where each command or process substitution starts ($(, `, <(, >(), wherever bash would run it.
    substitutions: list[int] = field(default_factory=list)
    unterminated: str | None = None  # what was left open at the end, in words

    def unquoted(self, index: int) -> bool:
        return self.mask[index] == CODE


def _read_delimiter(text: str, start: int) -> tuple[str, int, bool]:
    """The here-document delimiter word starting at `start`: (value after quote removal, end index, quoted)."""
    i, n = start, len(text)
    value: list[str] = []
    quoted = False
    while i < n and text[i] not in _METACHARS:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            quoted = True
            value.append(text[i + 1])
            i += 2
        elif ch in "'\"":
            quoted = True
            close = text.find(ch, i + 1)
            if close < 0:
                return "".join(value) + text[i + 1 :], n, True
            value.append(text[i + 1 : close])
            i = close + 1
        else:
            value.append(ch)
            i += 1
    return "".join(value), i, quoted


def _find_ansi_end(text: str, start: int) -> int:
    """Index of the closing quote of a $'…' whose content starts at `start` (-1 if unterminated)."""
    i, n = start, len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "'":
            return i
        i += 1
    return -1


# What `_code` and `_double` treat as ordinary: every character either of them looks at is excluded.
_PLAIN_IN_CODE = re.compile(r"[^\\'$\"`<>()}#\n]+")
_PLAIN_IN_DOUBLE = re.compile(r"[^\"\\$`]+")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)
        self.mask = [CODE] * self.n
        self.stack: list[str] = []  # "dq", "cmd" ($( or `(`), "bt", "param"
        self.pending: list[tuple[int, str, tuple[int, int], bool, bool]] = []
        self.result = Scan(text, "")

    def set(self, start: int, end: int, code: str) -> None:
        for k in range(start, min(end, self.n)):
            self.mask[k] = code

    def run(self) -> Scan:
        i = 0
        while i < self.n:
            ctx = self.stack[-1] if self.stack else "top"
            # A run that changes no context is skipped in one step, marked as one character at a time would be.
            plain = (_PLAIN_IN_DOUBLE if ctx == "dq" else _PLAIN_IN_CODE).match(self.text, i)
            if plain is not None:
                if ctx == "dq":
                    self.mask[i : plain.end()] = [DOUBLE] * (plain.end() - i)
                i = plain.end()
                continue
            i = self._double(i) if ctx == "dq" else self._code(i, ctx)
        if self.pending:
            for op_start, delim, span, quoted, strip in self.pending:
                self.result.heredocs.append(Heredoc(op_start, delim, span, quoted, strip, None, False))
            self.result.unterminated = self.result.unterminated or "a here-document with no body"
        if self.stack and self.result.unterminated is None:
            names = {"dq": 'a double quote (")', "cmd": "a parenthesis or $(", "bt": "a backtick (`)", "param": "${"}
            self.result.unterminated = names.get(self.stack[-1], "a quote")
        self.result.mask = "".join(self.mask)
        return self.result

    def _double(self, i: int) -> int:
        text, ch = self.text, self.text[i]
        if ch == '"':
            self.mask[i] = QUOTE
            self.stack.pop()
            return i + 1
        if ch == "\\" and i + 1 < self.n:
            self.set(i, i + 2, DOUBLE)
            return i + 2
        if text.startswith("$(", i) or text.startswith("${", i):
            self._open_expansion(i)
            self.set(i, i + 2, CODE)
            return i + 2
        if ch == "`":
            self.mask[i] = QUOTE
            self.stack.append("bt")
            self.result.substitutions.append(i)
            return i + 1
        self.mask[i] = DOUBLE
        return i + 1

    def _open_expansion(self, i: int) -> None:
        """At `$(` or `${`: enter the nested context (and note a command substitution, but not `$((`)."""
        if self.text[i + 1] == "(":
            if not self.text.startswith("$((", i):
                self.result.substitutions.append(i)
            self.stack.append("cmd")
        else:
            self.stack.append("param")

    def _code(self, i: int, ctx: str) -> int:
        text, ch = self.text, self.text[i]
        if ch == "\\":
            self.set(i, i + 2, ESCAPED)
            return i + 2
        if ch == "'":
            close = text.find("'", i + 1)
            if close < 0:
                self.result.unterminated = self.result.unterminated or "a single quote (')"
                self.mask[i] = QUOTE
                self.set(i + 1, self.n, SINGLE)
                return self.n
            self.mask[i] = self.mask[close] = QUOTE
            self.set(i + 1, close, SINGLE)
            return close + 1
        if ch == "$" and text.startswith("$'", i):
            close = _find_ansi_end(text, i + 2)
            end = close if close >= 0 else self.n
            self.set(i, i + 2, QUOTE)
            self.set(i + 2, end, SINGLE)
            if close < 0:
                self.result.unterminated = self.result.unterminated or "an ANSI-C quote ($')"
                return self.n
            self.mask[close] = QUOTE
            self.result.ansi_strings.append(AnsiString("ansi-c", (i, close + 1), text[i + 2 : close]))
            return close + 1
        if ch == "$" and text.startswith('$"', i):
            self.set(i, i + 2, QUOTE)
            self.stack.append("dq")
            close = self._locale_end(i + 2)
            self.result.ansi_strings.append(AnsiString("locale", (i, close), text[i + 2 : max(close - 1, i + 2)]))
            return i + 2
        if ch == '"':
            self.mask[i] = QUOTE
            self.stack.append("dq")
            return i + 1
        if ch == "`":
            self.mask[i] = QUOTE
            if ctx == "bt":
                self.stack.pop()
            else:
                self.stack.append("bt")
                self.result.substitutions.append(i)
            return i + 1
        if text.startswith("$(", i) or text.startswith("${", i):
            self._open_expansion(i)
            return i + 2
        if ch in "<>" and text.startswith("(", i + 1):
            self.result.substitutions.append(i)  # process substitution
            self.stack.append("cmd")
            return i + 2
        if ch == "(" and ctx == "cmd":
            self.stack.append("cmd")
            return i + 1
        if (ch == ")" and ctx == "cmd") or (ch == "}" and ctx == "param"):
            self.stack.pop()
            return i + 1
        if ch == "#" and ctx != "param" and (i == 0 or text[i - 1] in _WORD_BREAK_BEFORE_COMMENT):
            end = text.find("\n", i)
            end = self.n if end < 0 else end
            self.set(i, end, COMMENT)
            return end
        if ch == "<" and text.startswith("<<<", i):
            return i + 3  # a here-string, not a here-document
        if ch == "<" and text.startswith("<<", i) and ctx != "param":
            return self._heredoc_operator(i)
        if ch == "\n" and self.pending:
            return self._heredoc_bodies(i + 1)
        return i + 1

    def _locale_end(self, start: int) -> int:
        """Best-effort end (exclusive) of a $"…" string, for reporting only; the main loop does the masking."""
        i = start
        while i < self.n:
            if self.text[i] == "\\":
                i += 2
                continue
            if self.text[i] == '"':
                return i + 1
            i += 1
        return self.n

    def _heredoc_operator(self, i: int) -> int:
        strip = self.text.startswith("<<-", i)
        j = i + (3 if strip else 2)
        while j < self.n and self.text[j] in " \t":
            j += 1
        delim, end, quoted = _read_delimiter(self.text, j)
        if delim or quoted:
            self.pending.append((i, delim, (j, end), quoted, strip))
        # The delimiter word itself is scanned as ordinary code (its quotes get their usual masks).
        return i + (3 if strip else 2)

    def _heredoc_bodies(self, start: int) -> int:
        """Consume the bodies of every pending here-document, starting at the line after the operator."""
        pos = start
        for op_start, delim, span, quoted, strip in self.pending:
            body_start = pos
            terminated = False
            while pos < self.n:
                line_end = self.text.find("\n", pos)
                line_end = self.n if line_end < 0 else line_end
                line = self.text[pos:line_end]
                if (line.lstrip("\t") if strip else line) == delim:
                    self.set(body_start, line_end, HEREDOC)
                    heredoc = Heredoc(op_start, delim, span, quoted, strip, (body_start, pos), True)
                    self.result.heredocs.append(heredoc)
                    pos = line_end
                    terminated = True
                    break
                pos = line_end + 1
            if not terminated:
                self.set(body_start, self.n, HEREDOC)
                body = (body_start, self.n)
                self.result.heredocs.append(Heredoc(op_start, delim, span, quoted, strip, body, False))
                self.result.unterminated = self.result.unterminated or f"a here-document (no line {delim!r})"
                pos = self.n
        self.pending.clear()
        return pos


def scan(text: str) -> Scan:
    """The quoting context of every character of `text` (see the module docstring)."""
    return _Scanner(text).run()
