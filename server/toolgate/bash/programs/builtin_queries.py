"""Builtins that only print in some of their forms: `command -v`, `alias`, `umask`, `trap -p`, `jobs`, `wait`, ….

Each reads its options the way bash's own option parser does (short options only, clustered, values attached
or separate, `--` or the first operand ends them: `builtin_options`), and
an option not listed here makes the command not read-only. The forms that set state or run code are named
with why: `jobs -x` runs a command, `wait -p a[$(…)]` evaluates a subscript, `trap 'cmd' EXIT` sets code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Options, Verdict, read_options
from toolgate.bash.programs.builtins import builtin_options, shell_variable_problem

_Rule = Callable[[str, list[tuple[str, Word | None]], list[Word]], str | None]  # → why not read-only, or None


def _query(spec: Options, rule: _Rule, what: str) -> Callable[[str, Sequence[Word]], Verdict]:
    def check(name: str, args: Sequence[Word]) -> Verdict:
        parsed = read_options(name, args, spec)
        if parsed.problem is not None:
            return parsed.refusal()
        unknown = next((w for w in parsed.operands if w.unknown or w.pattern), None)
        if unknown is not None:
            return Verdict.no(f"{name}'s argument {unknown.raw} is only known when it runs")
        problem = rule(name, parsed.options, parsed.operands)
        return Verdict.no(problem) if problem else Verdict.ok(f"{name} {what}")

    return check


def _given(options: list[tuple[str, Word | None]], *letters: str) -> bool:
    return any(name in letters for name, _ in options)


def _command(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    if _given(options, "-v", "-V"):
        return None
    return "command runs a command by name, bypassing the checks on its name (only -v and -V just describe it)"


def _alias(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    if any("=" in w.value for w in operands):
        return "alias defines a name that replaces later commands"
    return None


def _no_operands(setting: str) -> _Rule:
    def rule(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
        return f"{name} {operands[0].raw} {setting}" if operands else None

    return rule


def _trap(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    if operands and not _given(options, "-p", "-P"):
        return "trap sets code to run later, on a signal or when the shell exits"
    return None


def _history(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    if len(operands) > 1 or (operands and not operands[0].value.isdigit()):
        return "history with arguments other than a count changes the history"
    return None


def _kill(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    if not _given(options, "-l", "-L"):
        return "kill sends signals to processes (only kill -l just lists signal names)"
    return None


def _hash(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    if operands and not _given(options, "-t"):
        return "hash with a name changes which program that name runs (only -t and -l just print)"
    return None


def _fc(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    return None if _given(options, "-l") else "fc runs commands again from the history (only fc -l just lists)"


def _wait(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    for option, value in options:
        if option == "-p":
            if value is None or value.unknown:
                return "wait -p assigns to a variable only known when it runs"
            return shell_variable_problem(value.value)
    return None


def _lists(name: str, options: list[tuple[str, Word | None]], operands: list[Word]) -> str | None:
    return None


_SETS_LIMIT = "sets a resource limit"
CHECKERS = {
    "command": _query(builtin_options(known="pvV"), _command, "only says what a name would run"),
    "alias": _query(builtin_options(known="p"), _alias, "only prints aliases"),
    "umask": _query(
        builtin_options(known="pS"),
        _no_operands("changes the permissions of files created later"),
        "only prints the mask",
    ),
    "ulimit": _query(
        builtin_options(known="SHabcdefiklmnpqrstuvxPRT"), _no_operands(_SETS_LIMIT), "only prints limits"
    ),
    "shopt": _query(
        builtin_options(
            known="pq",
            forbidden={
                "-s": "shopt -s changes how later commands are read",
                "-u": "shopt -u changes how later commands are read",
                "-o": "shopt -o reads or changes set -o options this checker does not list",
            },
        ),
        _lists,
        "only prints shell options",
    ),
    "trap": _query(builtin_options(known="lpP"), _trap, "only prints traps"),
    "history": _query(
        builtin_options(
            forbidden={
                f"-{c}": "history with that option clears, reads, writes or adds to the history" for c in "cdanrwps"
            }
        ),
        _history,
        "only prints the history",
    ),
    "kill": _query(builtin_options(known="lL"), _kill, "only lists signal names"),
    "hash": _query(
        builtin_options(
            known="lt",
            forbidden={
                "-p": "hash -p sets the program that a command name runs",
                "-d": "hash -d changes which program a command name runs",
                "-r": "hash -r changes which program later command names run",
            },
        ),
        _hash,
        "only prints the table of remembered programs",
    ),
    "fc": _query(
        builtin_options(
            "",
            "lnr0123456789",
            {"-e": "fc -e runs an editor and then the edited commands", "-s": "fc -s runs a command again"},
        ),
        _fc,
        "only lists the history",
    ),
    "jobs": _query(
        builtin_options(known="lnprs", forbidden={"-x": "jobs -x runs a command"}), _lists, "only lists jobs"
    ),
    "wait": _query(builtin_options("p", "fn"), _wait, "only waits for background jobs"),
}
