"""Commands from the option models: every program × its options × every spelling the program accepts.

A long option is written whole, abbreviated to each unambiguous prefix, with `=value` and with a separate value;
a short one alone, clustered with a harmless flag before or after it, with its value attached or separate. The
option goes before the operands, after them (GNU permutes) or after `--` (where it is an operand). Values are
chosen to show a write or an exec when the option really takes one: a new file name, a program name, a command.
"""

from __future__ import annotations

import random
import shlex
from collections.abc import Iterator, Sequence

from tests.differential.models import OptionModel, git_model, option_models, unique_prefixes

# Values an option may be given: a new file in the repository (a write shows), programs (an exec shows), a
# command line, a path in the private /tmp, a variable name with a subscript, and plain values most options take.
VALUES = (
    "pwned.out",
    "touch",
    "sh",
    "touch pwned.out",
    "1",
    "5",
    "HEAD",
    "notes.txt",
    "/tmp/x",
    "{}",
    "a[$(touch pwned.out)]",  # a name whose subscript bash evaluates (read -a, wait -p, printf -v)
)
# Operands that fit each kind of program in the fixture repository (runner.FIXTURE_FILES).
_OPERANDS: dict[str, tuple[str, ...]] = {
    "grep": ("TODO notes.txt", "-r TODO .", "TODO src/main.py"),
    "rg": ("TODO", "TODO .", "TODO notes.txt"),
    "find": (".", "src", ". -name '*.py'"),
    "fd": ("", "py", ". src"),
    "sed": ("-n 1p notes.txt", "'s/TODO/DONE/' notes.txt", "= notes.txt"),
    "awk": ("'{print $1}' notes.txt", "'NR==1' notes.txt"),
    "jq": ("'.' data.json", "-r .name data.json"),
    "date": ("+%s", ""),
    "xargs": ("cat", "", "wc -l", "-n1 echo"),
    "test": ("-f notes.txt", "-d src"),
    "cd": ("src", "..", ""),
    # Wrappers: what they run.
    "timeout": ("5 cat notes.txt", "1 git status"),
    "nice": ("cat notes.txt", "git log -1"),
    "nohup": ("cat notes.txt",),
    "stdbuf": ("cat notes.txt",),
    "time": ("cat notes.txt", "git status"),
    "env": ("cat notes.txt", "git log -1", "LC_ALL=C sort notes.txt"),
}
_GIT_OPERANDS: dict[str, tuple[str, ...]] = {
    "grep": ("TODO", "-e TODO"),
    "blame": ("notes.txt",),
    "cat-file": ("-p HEAD", "-t HEAD"),
    "config": ("--get user.name", "--list"),
    "check-ignore": ("build",),
    "check-attr": ("diff notes.txt",),
    "diff": ("HEAD~1", "HEAD~1 HEAD", ""),
    "ls-tree": ("HEAD",),
    "merge-base": ("HEAD main",),
    "range-diff": ("HEAD~1...HEAD",),
    "ls-remote": ("origin", ".", "", "--heads origin"),
    "remote": ("-v", "show origin", "get-url origin", "show -n origin"),
    "stash": ("list", "show"),
    "worktree": ("list",),
    "reflog": ("show", "", "exists HEAD"),
}
_DEFAULT_OPERANDS = ("notes.txt", "", ".", "src", "notes.txt README.md", "src/main.py")
_ALIASES = {"egrep": "grep", "fgrep": "grep", "gawk": "awk", "mawk": "awk", "nawk": "awk", "fdfind": "fd"}


def _value(rng: random.Random) -> str:
    return shlex.quote(rng.choice(VALUES))


def _short_flag_letters(model: OptionModel) -> list[str]:
    return [o[1] for o in model.flags if len(o) == 2 and o[0] == "-" and o[1].isalpha()]


def spellings(option: str, model: OptionModel, rng: random.Random, *, takes_value: bool | None) -> list[str]:
    """The ways a program reads `option` (with a value when it takes one; `None`: not known, so both)."""
    value = _value(rng)
    with_value = takes_value is not False
    without_value = takes_value is not True
    out: list[str] = []
    if option.startswith("--"):
        prefixes = unique_prefixes(option, model.long_names())
        names = [option, *prefixes[:1]]  # whole, and the shortest abbreviation
        if len(prefixes) > 1:
            names.append(rng.choice(prefixes[1:]))
        for name in names:
            if without_value:
                out.append(name)
            if with_value:
                out += [f"{name}={value}", f"{name} {value}"]
        return out
    if len(option) == 2:
        letters = _short_flag_letters(model)
        other = rng.choice(letters) if letters else ""
        if without_value:
            out += [option, f"-{other}{option[1]}" if other else option, f"{option}{other}"]
        if with_value:
            out += [f"{option}{value}", f"{option} {value}"]
            if other:
                out += [f"-{other}{option[1]} {value}", f"-{other}{option[1]}{value}"]
        return out
    # A one-dash long option (find -exec, xxd -ps): as written, with and without a value.
    if without_value:
        out.append(option)
    if with_value:
        out.append(f"{option} {value}")
    return out


def _operands(program: str, rng: random.Random) -> str:
    return rng.choice(_OPERANDS.get(_ALIASES.get(program, program), _DEFAULT_OPERANDS))


def _pick_option(model: OptionModel, rng: random.Random) -> tuple[str, bool | None] | None:
    pools: list[tuple[Sequence[str], bool | None]] = [
        (model.forbidden, None),
        (model.valued, True),
        (model.flags, False),
        (model.unsure, None),
    ]
    pools = [(pool, kind) for pool, kind in pools if pool]
    if not pools:
        return None
    # Forbidden options and their spellings are what a wrong table lets through most often: weigh them up.
    pool, kind = pools[0] if model.forbidden and rng.random() < 0.35 else rng.choice(pools)
    return rng.choice(pool), kind


def option_command(model: OptionModel, rng: random.Random) -> str:
    """One command for `model`'s program: one to three of its options, spelled one of the accepted ways."""
    program = model.program
    operands = _operands(program, rng)
    if model.subcommands:
        sub = rng.choice(model.subcommands)
        sub_model = git_model(sub, model)
        global_option = ""
        if rng.random() < 0.2:
            picked = _pick_option(model, rng)
            if picked is not None:
                global_option = rng.choice(spellings(picked[0], model, rng, takes_value=picked[1])) + " "
        program = f"git {global_option}{sub}"
        operands = rng.choice(_GIT_OPERANDS.get(sub, ("", "HEAD", "notes.txt", "-- notes.txt")))
        model = sub_model
    words: list[str] = []
    for _ in range(rng.randint(1, 3)):
        picked = _pick_option(model, rng)
        if picked is None:
            break
        option, kind = picked
        words.append(rng.choice(spellings(option, model, rng, takes_value=kind)))
    placement = rng.random()
    if placement < 0.6 or not operands:
        return " ".join(filter(None, [program, *words, operands]))
    if placement < 0.9:
        return " ".join(filter(None, [program, operands, *words]))
    return " ".join(filter(None, [program, operands, "--", *words]))


def option_commands(rng: random.Random, models: dict[str, OptionModel] | None = None) -> Iterator[str]:
    """An endless stream of commands from the option models, programs drawn evenly."""
    models = models if models is not None else option_models()
    names = sorted(models)
    while True:
        yield option_command(models[rng.choice(names)], rng)
