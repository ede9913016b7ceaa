"""A way past bashlex for the plainest commands: words (quoted or not) joined by `|`, `||`, `&&` and `;`.

Most agent commands look like `git status`, `rg -n 'def main' src | head -20` or `cd web && npm test`. For them
bashlex's general parser (a port of bash's yacc grammar) is most of the classifier's time, while its answer is
fixed by where the unquoted blanks and operators are. `parse_plain` builds the very `ParsedScript` that
`parse.parse` builds from bashlex's tree, and returns None for anything else, which then goes to bashlex: any `$`,
backquote or backslash, a redirection, parenthesis, brace, comment, newline or here-document, `!`, a lone `&`,
a reserved word, an assignment before the command name, an operator without a command on each side.
tests/unit/bash/test_plain_parse.py holds it to the same answer as bashlex on the benchmark corpus and on
generated commands.
"""

from __future__ import annotations

import re

from toolgate.bash.parse import ParsedCommand, ParsedScript, Word
from toolgate.bash.quoting import CODE, DOUBLE, QUOTE, SINGLE, Scan
from toolgate.bash.word_values import word_value

# Unquoted characters a plain word may hold: none starts an expansion, escape, redirection, group or comment.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:,@%+=~*?[]-^")
_OPERATOR_CHARS = frozenset("|&;")
_OPERATORS = frozenset({"|", "||", "&&", ";"})
_QUOTED = frozenset({QUOTE, SINGLE, DOUBLE})
_BLANKS = frozenset(" \t")
# Words bash reads as syntax in command position; `[[`/`]]` and `{`/`}` too. Refused anywhere, to keep this simple.
_RESERVED = frozenset(
    [
        "!",
        "[[",
        "]]",
        "{",
        "}",
        "case",
        "coproc",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "time",
        "until",
        "while",
    ]
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\+?=|\[)")


def parse_plain(text: str, info: Scan) -> ParsedScript | None:
    """The parse of a plain command without bashlex, or None when the command is not plain (see the module)."""
    if info.unterminated or info.heredocs or "$" in text or "`" in text or "\\" in text:
        return None
    tokens = _tokens(text, info.mask)
    if tokens is None or not tokens or tokens[0][0] or tokens[-1][0]:
        return None
    script = ParsedScript()
    scopes = [0]  # subshell scopes numbered so far
    pipeline: list[list[tuple[int, int]]] = [[]]  # the commands of the pipeline being read, each as word spans
    for is_operator, start, end in tokens:
        if not is_operator:
            pipeline[-1].append((start, end))
            continue
        if not pipeline[-1]:
            return None  # two operators in a row
        op = text[start:end]
        script.operators.append(op)
        if op == "|":
            pipeline.append([])
        else:
            if not _add_pipeline(script, text, pipeline, scopes):
                return None
            pipeline = [[]]
    if not _add_pipeline(script, text, pipeline, scopes):
        return None
    script.final_command = script.commands[-1]
    return script


def _tokens(text: str, mask: str) -> list[tuple[bool, int, int]] | None:
    """(is an operator, start, end) for each word and operator, or None on anything that is not plain."""
    tokens: list[tuple[bool, int, int]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        code = mask[i]
        if code == CODE and ch in _BLANKS:
            i += 1
            continue
        start = i
        if code == CODE and ch in _OPERATOR_CHARS:
            while i < n and mask[i] == CODE and text[i] in _OPERATOR_CHARS:
                i += 1
            if text[start:i] not in _OPERATORS:
                return None
            tokens.append((True, start, i))
            continue
        while i < n:
            code = mask[i]
            if code == CODE:
                ch = text[i]
                if ch in _BLANKS or ch in _OPERATOR_CHARS:
                    break
                if ch not in _WORD_CHARS:
                    return None
            elif code not in _QUOTED:
                return None  # an escape, a comment or a here-document
            i += 1
        if text[start:i] in _RESERVED:
            return None
        tokens.append((False, start, i))
    return tokens


def _add_pipeline(script: ParsedScript, text: str, pipeline: list[list[tuple[int, int]]], scopes: list[int]) -> bool:
    """Append the commands of one pipeline; False when the pipeline is not plain after all."""
    if not pipeline[-1]:
        return False
    several = len(pipeline) > 1
    for spans in pipeline:
        if _ASSIGNMENT.match(text, spans[0][0]):
            return False  # `NAME=value cmd`: bashlex decides what is an assignment
        # Each member of a real pipeline runs in a subshell of its own, numbered in order (as parse._Walker does).
        scope: tuple[int, ...] = ()
        if several:
            scopes[0] += 1
            scope = (scopes[0],)
        script.commands.append(
            ParsedCommand(
                words=tuple(_word(text[start:end]) for start, end in spans),
                assignments=(),
                redirects=(),
                span=(spans[0][0], spans[-1][1]),
                scope=scope,
            )
        )
    return True


def _word(raw: str) -> Word:
    info = word_value(raw)
    return Word(raw, info.value, info.expansion, info.pattern, info.tilde, info.other_tilde, False)
