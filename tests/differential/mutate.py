"""Mutations of the everyday corpus: the commands people run, changed the ways the attack classes change them.

Each mutation takes a command and returns a variant (or None when it does not apply): an option of the program
inserted or respelled, a redirection added, the command wrapped in a builtin or wrapper, paths turned into globs,
the sed or awk program given a command that writes or runs, git given configuration or environment that names a
program, the shell given environment it reads.
"""

from __future__ import annotations

import random
import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.differential.generate import spellings
from tests.differential.models import option_models, unique_prefixes
from tests.unit.permissions.corpus import Layout, load_cases

EVERYDAY = Path(__file__).parents[1] / "fixtures" / "everyday_readonly.txt"

Mutation = Callable[[str, random.Random], "str | None"]

_REDIRECTIONS = (
    "> pwned.out",
    ">> pwned.out",
    ">| pwned.out",
    "&> pwned.out",
    "2> pwned.out",
    "<> pwned.out",
    "> /dev/null",
    "2>&1",
    ">&2",
    "2>/dev/null",
    ">&pwned.out",
    "3> pwned.out",
    "> /tmp/out",
)
_WRAPPERS = (
    "command ",
    "time ",
    "time -p ",
    "exec ",
    "builtin ",
    "nice ",
    "nice -n 5 ",
    "timeout 5 ",
    "timeout -s KILL 5 ",
    "env ",
    "env -i ",
    "nohup ",
    "stdbuf -oL ",
    "command -p ",
    "\\",
)
_SED_PROGRAMS = (
    "w pwned.out",
    "s/a/b/w pwned.out",
    "1e touch pwned.out",
    "s/.*/touch pwned.out/e",
    "W pwned.out",
    "/TODO/w pwned.out",
    "1!G;h;$!d;w pwned.out",
    "b end;:end\nw pwned.out",
    "s|a|b|w pwned.out",
    "s/a/b/gw pwned.out",
    "y/a/b/;w pwned.out",
    "1{w pwned.out\n}",
    "e touch pwned.out",
    "F;R notes.txt",
    "$!N;s/\\n/ /;w pwned.out",
    "s/a/b/;#w pwned.out",
)
_AWK_PROGRAMS = (
    'BEGIN{system("touch pwned.out")}',
    '{print > "pwned.out"}',
    '{print | "sh"}',
    'BEGIN{"touch pwned.out" | getline x}',
    '{printf "x" >> "pwned.out"}',
    'BEGIN{f="pwned.out"; print 1 > f}',
    'BEGIN { system ("touch pwned.out") }',
    'BEGIN{print 1 |& "sh"}',
    'BEGIN{s="system"; @s("touch pwned.out")}',
    'BEGIN{close("x"); fflush(); system("")}',
    'BEGIN{getline < "notes.txt"; print > "/dev/stderr"}',
    '{ print $0 > ENVIRON["HOME"] "/pwned.out" }',
    'BEGIN{printf("%s", "x") > "pwned.out"}',
    '{print}#system("touch pwned.out")',
)
_GIT_ENVIRONMENT = (
    "GIT_PAGER='touch pwned.out'",
    "GIT_EXTERNAL_DIFF=touch",
    "GIT_CONFIG_PARAMETERS=\"'core.pager=touch pwned.out'\"",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch pwned.out'",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.external GIT_CONFIG_VALUE_0=touch",
    "GIT_TRACE=$PWD/pwned.out",
    "GIT_TRACE2=$PWD/pwned.out",
    "GIT_TRACE_PERFORMANCE=/tmp/scratch/pwned.out",
    "GIT_INDEX_FILE=pwned.out",
    "GIT_DIR=.git",
    "GIT_SSH_COMMAND='touch pwned.out'",
    "GIT_EDITOR='touch pwned.out'",
    "GIT_CONFIG_GLOBAL=notes.txt",
    "GIT_OPTIONAL_LOCKS=1",
)
_GIT_CONFIG = (
    "-c core.pager='touch pwned.out'",
    "-c core.fsmonitor='touch pwned.out'",
    "-c diff.external=touch",
    "-c alias.log='!touch pwned.out'",
    "-c core.hooksPath=.",
    "--config-env=core.pager=HOME",
    "-ccore.pager=touch",
    "-p",
    "--paginate",
    "--no-pager",
    "-P",
    "--exec-path=.",
)
_SHELL_ENVIRONMENT = (
    "BASH_ENV=notes.txt",
    "PAGER='touch pwned.out'",
    "LESSOPEN='|touch pwned.out'",
    "PS4='$(touch pwned.out)' SHELLOPTS=xtrace",
    "LC_ALL=C",
    "TZ=UTC",
    "LD_PRELOAD=/tmp/x.so",
    "PATH=.:$PATH",
    "TMPDIR=.",
    "HOME=.",
    "XDG_CONFIG_HOME=.",
    "RIPGREP_CONFIG_PATH=notes.txt",
    "GREP_OPTIONS=--help",
    "POSIXLY_CORRECT=1",
)
_GLOBS = ("*", "*.txt", "?otes.txt", "[n]otes.txt", "src/*", ".*", "~/*", "no*", "{notes,README}.*", "*/*.py")
_PATHLIKE = re.compile(r"^[\w./~-]+\.\w+$|^(src|\.|\.\.|docs)$")


def corpus_commands() -> list[str]:
    """The everyday read-only list and the permission corpus, their placeholders pointed at the fixture."""
    lines = [line.strip() for line in EVERYDAY.read_text(encoding="utf-8").splitlines()]
    everyday = [line for line in lines if line and not line.startswith("#")]
    layout = Layout(Path("/tmp/scratch/repo"), Path("/tmp/scratch/outside"), Path("/tmp/scratch/home"))
    cases = [case.command for case in load_cases(layout)]
    return list(dict.fromkeys([*everyday, *cases]))


_SHELL_SYNTAX = re.compile(r"[|&;<>()$`\n]")


def _split(command: str) -> list[str] | None:
    """The words of a command that is one simple command (no operators, redirections or expansions), else None:
    re-joining the words of anything more would quote its syntax away."""
    if _SHELL_SYNTAX.search(command):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _join(words: list[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


def _program_index(words: list[str]) -> int | None:
    for index, word in enumerate(words):
        if "=" not in word or word.startswith("-"):
            return index
    return None


def insert_option(command: str, rng: random.Random) -> str | None:
    words = _split(command)
    if not words or (index := _program_index(words)) is None:
        return None
    model = option_models().get(words[index])
    if model is None:
        return None
    pool = [(o, True) for o in model.valued] + [(o, False) for o in model.flags] + [(o, None) for o in model.forbidden]
    if not pool:
        return None
    option, kind = rng.choice(pool)
    spelled = shlex.split(rng.choice(spellings(option, model, rng, takes_value=kind)))
    at = rng.randint(index + 1, len(words))
    return _join([*words[:at], *spelled, *words[at:]])


def respell(command: str, rng: random.Random) -> str | None:
    """`--lines=5` → `--li=5`, `-n 5` → `-n5`: the same options, another spelling the program accepts."""
    words = _split(command)
    if not words or (index := _program_index(words)) is None:
        return None
    model = option_models().get(words[index])
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        following = words[i] if i < len(words) else "-"
        if model is not None and word.startswith("--") and len(word) > 3:
            name, eq, value = word.partition("=")
            prefixes = unique_prefixes(name, model.long_names()) or [name[: max(3, len(name) // 2)]]
            out.append(rng.choice(prefixes) + eq + value)
        elif len(word) == 2 and word[0] == "-" and not following.startswith("-") and rng.random() < 0.5:
            out.append(word + following)  # the value attached
            i += 1
        else:
            out.append(word)
    return _join(out) if out != words else None


def add_redirection(command: str, rng: random.Random) -> str | None:
    return f"{command} {rng.choice(_REDIRECTIONS)}"


def wrap(command: str, rng: random.Random) -> str | None:
    choice = rng.random()
    if choice < 0.15:
        return f"eval {shlex.quote(command)}"
    if choice < 0.25:
        return f"echo notes.txt | xargs {command}"
    if choice < 0.3:
        return f"{{ {command}; }}"
    if choice < 0.35:
        return f"( {command} )"
    return rng.choice(_WRAPPERS) + command


def glob_paths(command: str, rng: random.Random) -> str | None:
    words = _split(command)
    if not words:
        return None
    candidates = [i for i, w in enumerate(words) if i > 0 and _PATHLIKE.match(w)]
    if not candidates:
        return f"{command} {rng.choice(_GLOBS)}"
    i = rng.choice(candidates)
    return " ".join([_join(words[:i]), rng.choice(_GLOBS), _join(words[i + 1 :])]).strip()


def script_program(command: str, rng: random.Random) -> str | None:
    """A sed or awk command's program replaced by one that writes or runs, or such a program added."""
    words = _split(command)
    if not words or (index := _program_index(words)) is None:
        return None
    program = words[index]
    if program == "sed" or (program not in ("awk", "gawk", "mawk") and rng.random() < 0.5):
        script = rng.choice(_SED_PROGRAMS)
        flag = rng.choice(["", "-n ", "-e ", "--expression=", "-s ", "-E ", "-z "])
        joined = f"{flag}{shlex.quote(script)}" if not flag.endswith("=") else shlex.quote(f"{flag}{script}")
        return f"sed {joined} notes.txt"
    script = rng.choice(_AWK_PROGRAMS)
    flag = rng.choice(["", "-v x=1 ", "-F: ", "-e ", "-- "])
    return f"{program if program.endswith('awk') else 'awk'} {flag}{shlex.quote(script)} notes.txt"


def git_configuration(command: str, rng: random.Random) -> str | None:
    words = _split(command)
    if not words or (index := _program_index(words)) is None or words[index] != "git":
        return None
    if rng.random() < 0.5:
        return f"{rng.choice(_GIT_ENVIRONMENT)} {command}"
    rest = " ".join(shlex.quote(w) for w in words[index + 1 :])
    return f"{' '.join(words[:index])} git {rng.choice(_GIT_CONFIG)} {rest}".strip()


def shell_environment(command: str, rng: random.Random) -> str | None:
    return f"{rng.choice(_SHELL_ENVIRONMENT)} {command}"


MUTATIONS: tuple[Mutation, ...] = (
    insert_option,
    respell,
    add_redirection,
    wrap,
    glob_paths,
    script_program,
    git_configuration,
    shell_environment,
)


def mutated_commands(rng: random.Random, corpus: list[str] | None = None) -> Iterator[str]:
    """An endless stream of corpus commands with one or two mutations each."""
    corpus = corpus if corpus is not None else corpus_commands()
    while True:
        command: str | None = rng.choice(corpus)
        for _ in range(rng.choice((1, 1, 2))):
            mutation = rng.choice(MUTATIONS)
            command = mutation(command, rng) if command is not None else None
        if command is not None:
            yield command
