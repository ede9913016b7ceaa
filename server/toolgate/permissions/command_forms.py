"""The word lists a Bash rule is compared with, for one simple command. Pure: no I/O.

Allow rules see few forms (they must match less): the words as written, and the words after harmless
wrappers (`timeout 60`, `nice -n 5`) when every environment assignment is harmless. Deny and ask rules see
many (they must match more): the program by its base name (`/bin/rm` is `rm`), the command behind any
wrapper (`sudo -u root rm`, `env -i rm`, `xargs rm`, `command rm`), behind `find -exec`, inside `sh -c '…'`
and `eval '…'`, and git's subcommand behind its global options (`git -C . push` is `git push`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

# One table of wrapper and git options, shared with the classifier (issue: they were written twice and drifted).
from toolgate.bash.programs.git import GLOBAL_VALUE_OPTIONS
from toolgate.bash.programs.wrappers import WRAPPER_NAMES, value_options

Words = tuple[str, ...]

# Environment assignments that cannot change what a program runs or where it reads code from. Any other
# assignment (PATH, LD_PRELOAD, GIT_*, PAGER, NODE_OPTIONS, PYTHONPATH, ...) keeps a command from being
# allowed by a rule or by being read-only.
SAFE_ENV = frozenset(
    {
        "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC", "LC_TIME", "TZ",
        "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "TERM", "COLUMNS", "LINES",
        "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "CI", "GOOS", "GOARCH", "CGO_ENABLED", "TIME_STYLE",
    }
)  # fmt: skip
_SAFE_ENV_VALUE = re.compile(r"[A-Za-z0-9_./:,+@%=-]*")
# Wrappers an allow rule may look through: they change how long or how nicely a program runs, never which.
SAFE_WRAPPERS = frozenset({"timeout", "time", "nice", "nohup", "stdbuf", "ionice"})
_WRAPPER_ARG = re.compile(r"-.*|[0-9][0-9.]*[smhd]?|[A-Z][A-Z0-9]*|--")
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"})
_EXEC_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
MAX_DEPTH = 3

Classify = Callable[[str], Sequence[Sequence[str]]]  # a script → the argv of each simple command in it


def safe_assignment(assignment: str) -> bool:
    name, _, value = assignment.partition("=")
    return name in SAFE_ENV and _SAFE_ENV_VALUE.fullmatch(value) is not None


def program_name(words: Sequence[str]) -> str:
    """The program's base name: `/usr/bin/rm` → `rm`."""
    return words[0].rstrip("/").rsplit("/", 1)[-1] if words else ""


def _wrapper_prefix_is_safe(words: Sequence[str]) -> bool:
    if not words or program_name(words) not in SAFE_WRAPPERS:
        return False
    return all(program_name([w]) in SAFE_WRAPPERS or _WRAPPER_ARG.fullmatch(w) is not None for w in words[1:])


def allow_forms(argv: Words, effective: Words, assignments: Sequence[str]) -> list[Words]:
    if not all(safe_assignment(a) for a in assignments):
        return []
    forms = [argv] if argv else []
    stripped = len(argv) - len(effective)
    if effective and stripped > 0 and argv[stripped:] == effective and _wrapper_prefix_is_safe(argv[:stripped]):
        forms.append(effective)
    return forms


def _skip_wrapper(words: list[str]) -> list[str]:
    """The words after a wrapper and its options (and any VAR=value it sets)."""
    options = value_options(program_name(words)) or frozenset()
    rest = words[1:]
    while rest:
        word = rest[0]
        if word == "--":
            return rest[1:]
        if word in options:
            rest = rest[2:]
        elif word.startswith("-") or ("=" in word and not word.startswith("=")):
            rest = rest[1:]
        elif program_name(words) in ("timeout", "nice") and _WRAPPER_ARG.fullmatch(word):
            rest = rest[1:]  # timeout's duration
        else:
            break
    return rest


def _git_subcommand(words: Sequence[str]) -> Words:
    """`git -C dir --no-pager push` → `git push …`: git's own options are not part of what it is asked to do."""
    rest = list(words[1:])
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in GLOBAL_VALUE_OPTIONS and rest:
            rest.pop(0)
    return ("git", *rest)


def _script_of(words: Sequence[str]) -> str | None:
    """The script a shell runs with `-c`, or that eval runs."""
    name = program_name(words)
    if name == "eval":
        return " ".join(words[1:])
    if name in SHELLS:
        for index, word in enumerate(words[1:-1], start=1):
            if word.startswith("-") and "c" in word.lstrip("-") and not word.startswith("--"):
                return words[index + 1]
    return None


def deny_forms(argv: Words, effective: Words, classify: Classify | None = None, depth: int = 0) -> list[Words]:
    forms: list[Words] = []

    def add(form: Sequence[str]) -> None:
        if form and tuple(form) not in forms:
            forms.append(tuple(form))

    for start in (argv, effective):
        words = list(start)
        while words:
            add(words)
            add((program_name(words), *words[1:]))
            name = program_name(words)
            if name == "git":
                add(_git_subcommand(words))
            for index, word in enumerate(words):
                if word in _EXEC_ACTIONS and index + 1 < len(words):
                    tail = words[index + 1 :]
                    end = next((i for i, w in enumerate(tail) if w in (";", "+")), len(tail))
                    for form in deny_forms(tuple(tail[:end]), (), classify, depth + 1):
                        add(form)
            script = _script_of(words)
            if script is not None and depth < MAX_DEPTH:
                nested = list(classify(script)) if classify is not None else []
                for inner in nested or [tuple(w for w in crude_words(script))]:
                    for form in deny_forms(tuple(inner), (), classify, depth + 1):
                        add(form)
                for form in crude_forms(script):
                    add(form)
            if name not in WRAPPER_NAMES:
                break
            words = _skip_wrapper(words)
    return forms


# --- rough forms, for when the structure is incomplete ----------------------------------------------------

_CRUDE_SPLIT = re.compile(r"[;&|()\n`{}<>]|\$\(")


def crude_words(text: str) -> list[str]:
    return [w for w in re.sub(r"[\"'\\]", "", text).split() if w]


def crude_forms(command: str) -> list[Words]:
    """Rough word lists for every command-looking piece of `command`, for deny rules when the parse is
    incomplete (a substitution, or no parse at all). Quotes are removed, wrappers and assignments skipped."""
    forms: list[Words] = []
    for piece in _CRUDE_SPLIT.split(command.replace("\\\n", " ")):
        words = crude_words(piece)
        while words and ("=" in words[0] and not words[0].startswith("=")):
            words.pop(0)
        while words:
            for form in (tuple(words), (program_name(words), *words[1:])):
                if form not in forms:
                    forms.append(form)
            if program_name(words) not in WRAPPER_NAMES and words[0] not in ("then", "do", "else"):
                break
            words = _skip_wrapper(words) if words[0] not in ("then", "do", "else") else words[1:]
    return forms


# --- writing rules for commands ----------------------------------------------------------------------------


def _quote(word: str) -> str:
    if "*" not in word:
        return shlex.quote(word)
    # Inside quotes a star would read as a rule glob; unquoted and backslash-escaped it stays a literal star.
    return "".join(ch if ch.isalnum() or ch in "_-./=:,@%+" else "\\" + ch for ch in word)


def grammar_escape(text: str) -> str:
    """`(`, `)` and `\\` escaped, so the text can sit between a rule's parentheses."""
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def rule_for_words(words: Sequence[str]) -> str:
    """A command as an exact rule's specifier: shell-quoted words, escaped for the rule grammar."""
    return grammar_escape(" ".join(_quote(w) for w in words))


def exact_text(command: str) -> str:
    """The form an exact rule is compared with when it names a whole (possibly compound) command."""
    return " ".join(command.strip().split())
