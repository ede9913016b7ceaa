"""Each program's option model, read out of the classifier's tables, plus the options the program really has.

The tables change under us (they are edited as the classifier learns), so nothing here names a table's layout
beyond `Options`: a checker's model is the `Options` it reads with, and any option-looking word in its code or
in the module-level tables it reads. The program's own `--help` (and git's `--git-completion-helper`) adds the
options the program accepts that the table may not know; those are the ones a wrong table misses.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from toolgate.bash.programs import EVAL_LIKE, PROGRAMS, WRAPPERS
from toolgate.bash.programs.base import Options
from toolgate.bash.programs.git import SUBCOMMANDS
from toolgate.bash.programs.utilities import UTILITIES, VERSION_ONLY

_OPTION = re.compile(r"^--?[A-Za-z0-9][A-Za-z0-9-]*$")
# `  -o, --output=FILE`, `--lines[=N]`, `-n NUM`: the options a GNU --help lists, and whether they take a value.
_HELP_OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)(\[?=|\s[A-Z][A-Z_]+\b)?")
# `[-lnprs]`, `[-p var]`, `-x command`: the options in a bash builtin's synopsis, and whether they take a value.
_SYNOPSIS_OPTION = re.compile(r"(?<![\w-])-([A-Za-z]+)(?:\]| \[?([a-z][a-z-]*))?")
# git subcommands that also take the diff options (`git log --output=f`).
_TAKES_DIFF_OPTIONS = frozenset({"log", "show", "whatchanged", "diff-files", "diff-index", "diff-tree", "stash"})


@dataclass(frozen=True, slots=True)
class OptionModel:
    program: str
    flags: tuple[str, ...]  # options without a value ("-a", "--all")
    valued: tuple[str, ...]  # options that take one
    forbidden: tuple[str, ...]  # options the table says write or run something
    unsure: tuple[str, ...]  # option words seen in the table's code or the program's help, arity not known
    subcommands: tuple[str, ...] = ()  # git: the subcommands the table knows

    def every_option(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.flags, *self.valued, *self.forbidden, *self.unsure)))

    def long_names(self) -> tuple[str, ...]:
        return tuple(o for o in self.every_option() if o.startswith("--"))


def _from_options(spec: Options) -> tuple[list[str], list[str], list[str]]:
    flags = [f"-{c}" for c in dict.fromkeys(spec.known_short) if not c.isdigit()] + sorted(spec.long_flags)
    valued = [f"-{c}" for c in dict.fromkeys(spec.short_values + spec.optional_values)] + sorted(spec.long_values)
    return flags, valued, sorted(spec.forbidden)


def _code_constants(code: types.CodeType) -> Iterator[object]:
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_constants(constant)
        else:
            yield constant


def _option_words(value: object, depth: int = 0) -> Iterator[str]:
    """Every option-looking word inside a constant or table (strings, sets, dicts, tuples, Options)."""
    if depth > 4:
        return
    if isinstance(value, str):
        yield from (w for w in value.split() if _OPTION.match(w))
    elif isinstance(value, Options):
        for part in _from_options(value):
            yield from part
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _option_words(key, depth + 1)
            yield from _option_words(item, depth + 1)
    elif isinstance(value, (set, frozenset, tuple, list)):
        for item in value:
            yield from _option_words(item, depth + 1)


def _checker_options(program: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(flags, valued, forbidden, unsure) from the Options and tables the program's checker reads."""
    checker = PROGRAMS[program]
    module = sys.modules[checker.__module__]
    flags: list[str] = []
    valued: list[str] = []
    forbidden: list[str] = []
    unsure: list[str] = list(_option_words(list(_code_constants(checker.__code__))))
    for name in checker.__code__.co_names:
        table = getattr(module, name, None)
        if isinstance(table, dict) and program in table:
            table = table[program]  # a table keyed by program (writers' _SPECS)
        found = [table] if isinstance(table, Options) else [t for t in _flat(table) if isinstance(t, Options)]
        for spec in found:
            f, v, x = _from_options(spec)
            flags += f
            valued += v
            forbidden += x
        if not found and name.lstrip("_").isupper():  # a module-level table (FIND_ACTIONS, _AWK_FORBIDDEN)
            if isinstance(table, dict) and any(str(k).startswith("-") for k in table):
                forbidden += [k for k in table if isinstance(k, str) and _OPTION.match(k)]
            else:
                unsure += _option_words(table)
    return flags, valued, forbidden, unsure


def _flat(value: object) -> list[object]:
    return list(value) if isinstance(value, (tuple, list)) else []


def _ask(argv: list[str]) -> str:
    """What a program says about itself (its help), from /, without a pager; empty when it cannot say."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=5,
            stdin=subprocess.DEVNULL,
            cwd="/",
            env={**os.environ, "LC_ALL": "C", "PAGER": "cat", "MANPAGER": "cat"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout + done.stderr


@cache
def help_options(program: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(flags, valued) that `program --help` lists; empty when it has no GNU-style help."""
    if shutil.which(program) is None:
        return (), ()
    flags: dict[str, None] = {}
    valued: dict[str, None] = {}
    for line in _ask([program, "--help"]).splitlines():
        if not line.lstrip().startswith("-"):
            continue  # only lines that define options, not prose that mentions them
        for match in _HELP_OPTION.finditer(line.split("  ", 2)[-1] if line.startswith(" ") else line):
            option, value = match.group(1), match.group(2)
            (valued if value else flags)[option] = None
    return tuple(flags), tuple(valued)


@cache
def bash_builtins() -> frozenset[str]:
    return frozenset(_ask(["bash", "-c", "compgen -b"]).split())


def builtin_options(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(flags, valued) from bash's own synopsis of a builtin (`help -s wait`: wait [-fn] [-p var] [id ...])."""
    flags: dict[str, None] = {}
    valued: dict[str, None] = {}
    for letters, value in _SYNOPSIS_OPTION.findall(_ask(["bash", "-c", f"help -s {name}"]).partition(":")[2]):
        for letter in letters[:-1] if value else letters:
            flags[f"-{letter}"] = None
        if value:
            valued[f"-{letters[-1]}"] = None
    return tuple(flags), tuple(valued)


@cache
def git_options(subcommand: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(flags, valued) of a git subcommand, from git's own completion helper."""
    words: list[str] = []
    for sub in (subcommand, "diff") if subcommand in _TAKES_DIFF_OPTIONS else (subcommand,):
        words += _ask(["git", sub, "--git-completion-helper"]).split()
    words = [w for w in words if w.startswith("--") and w != "--"]
    flags = tuple(dict.fromkeys(w for w in words if not w.endswith("=")))
    valued = tuple(dict.fromkeys(w[:-1] for w in words if w.endswith("=")))
    return flags, valued


def _model(program: str, with_help: bool) -> OptionModel:
    if program in UTILITIES:
        flags, valued, forbidden = _from_options(UTILITIES[program].options)
        unsure: list[str] = []
    else:
        flags, valued, forbidden, unsure = _checker_options(program)
    subcommands: tuple[str, ...] = ()
    if program == "git":
        subcommands = tuple(sorted(SUBCOMMANDS))
    elif with_help and program not in VERSION_ONLY:
        # bash runs its builtin, not /usr/bin/printf or /usr/bin/test: ask bash what the builtin takes.
        builtin = program in bash_builtins()
        help_flags, help_valued = builtin_options(program) if builtin else help_options(program)
        flags += [o for o in help_flags if o not in flags and o not in valued]
        valued += [o for o in help_valued if o not in valued and o not in flags]
    known = {*flags, *valued, *forbidden}
    return OptionModel(
        program=program,
        flags=tuple(dict.fromkeys(flags)),
        valued=tuple(dict.fromkeys(valued)),
        forbidden=tuple(dict.fromkeys(forbidden)),
        unsure=tuple(dict.fromkeys(o for o in unsure if o not in known)),
        subcommands=subcommands,
    )


def _wrapper_model(name: str) -> OptionModel:
    spec = WRAPPERS[name]
    return OptionModel(
        program=name,
        flags=tuple(sorted(spec.flags)),
        valued=tuple(sorted(spec.valued - spec.forbidden.keys())),
        forbidden=tuple(sorted(spec.forbidden)),
        unsure=(),
    )


@cache
def option_models(with_help: bool = True) -> dict[str, OptionModel]:
    """Every program the classifier has a table for (not the ones it refuses outright), and every wrapper it
    looks through, with its model."""
    models = {name: _model(name, with_help) for name in sorted(PROGRAMS) if name not in EVAL_LIKE}
    return models | {name: _wrapper_model(name) for name in sorted(WRAPPERS)}


def git_model(subcommand: str, base: OptionModel) -> OptionModel:
    """A git subcommand's model: the table's options plus the ones git says the subcommand takes."""
    flags, valued = git_options(subcommand)
    return OptionModel(
        program=f"git {subcommand}",
        flags=flags,
        valued=valued,
        forbidden=base.forbidden,
        unsure=base.unsure,
    )


def unique_prefixes(option: str, others: Iterable[str]) -> list[str]:
    """The abbreviations of a long option that no other long option of the program shares (getopt_long)."""
    rivals = [o for o in others if o != option]
    out: list[str] = []
    for length in range(3, len(option)):
        prefix = option[:length]
        if not any(r.startswith(prefix) for r in rivals):
            out.append(prefix)
    return out
