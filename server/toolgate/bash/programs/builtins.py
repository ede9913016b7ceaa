"""Shell builtins: the ones that run code or change the shell's state, and the harmless ones with their rules.

Variables matter because later commands read them: `PATH=/tmp; ls` runs /tmp/ls, and `GIT_EXTERNAL_DIFF=x`
makes `git diff` run x. A variable set for a command (`NAME=value cmd`) must be on a short list of names
that only change formatting; a variable set in the shell (`name=value`, `for name in`, `read name`) must
not look like an environment variable (all capitals) unless it is on that list too.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Verdict, names

EVAL_LIKE: dict[str, str] = {
    "eval": "eval runs text as shell code",
    "source": "source runs the commands in a file",
    ".": ". runs the commands in a file",
    "exec": "exec replaces the shell with another program or rewires the shell's own file descriptors",
    "builtin": "builtin runs a builtin by name, bypassing the checks on its name",
    "command": "command runs a command by name, bypassing the checks on its name",
    "trap": "trap sets code to run later, on a signal or when the shell exits",
    "alias": "alias defines a name that replaces later commands",
    "unalias": "unalias changes what later command names mean",
    "fc": "fc runs commands again from the history",
    "coproc": "coproc starts a command in the background",
    "noglob": "noglob runs a command (zsh)",
    "nocorrect": "nocorrect runs a command (zsh)",
    "enable": "enable can load builtins from shared libraries",
    "mapfile": "mapfile assigns to a shell array",
    "readarray": "readarray assigns to a shell array",
    "hash": "hash -p sets the program that a command name runs",
    "bind": "bind changes key bindings",
    "complete": "complete registers completion code",
    "compgen": "compgen can run completion functions",
    "compopt": "compopt changes completion",
    "let": "let evaluates arithmetic, which can run commands through array subscripts",
    "declare": "declare sets variables or attributes, which can change how later commands run",
    "typeset": "typeset sets variables or attributes, which can change how later commands run",
    "local": "local sets variables, which can change how later commands run",
    "export": "export puts variables in the environment of later commands (PATH, GIT_*, …)",
    "readonly": "readonly sets variables",
    "unset": "unset removes variables or functions, which can change how later commands run",
    "shopt": "shopt changes shell options that affect how later commands are read",
    "getopts": "getopts assigns to shell variables",
    "ulimit": "ulimit changes resource limits",
    "umask": "umask changes the permissions of files created later",
    "kill": "kill sends signals to processes",
    "disown": "disown detaches jobs from the shell",
    "suspend": "suspend stops the shell",
    "logout": "logout ends the shell",
    "history": "history can clear or write the history file",
    "caller": "caller is only meaningful inside functions",
}

# Variables that only change formatting, language or time zone: safe to set for a read-only command.
SAFE_ENVIRONMENT = frozenset(
    {
        "LANG",
        "LANGUAGE",
        "TZ",
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "TERM",
        "COLORTERM",
        "COLUMNS",
        "LINES",
        "TIME_STYLE",
        "BLOCK_SIZE",
        "BLOCKSIZE",
        "LS_COLORS",
        "LSCOLORS",
        "GREP_COLOR",
        "GREP_COLORS",
    }
)
# Lower-case names that programs do read from the environment.
_LOWERCASE_ENVIRONMENT = frozenset({"http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy"})
_SAFE_VALUE_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:,@+-=")


def is_safe_environment(name: str) -> bool:
    return name in SAFE_ENVIRONMENT or name.startswith("LC_")


def prefix_assignment_problem(word: Word) -> str | None:
    """Why `NAME=value` in front of a command makes it not read-only (None: it does not)."""
    name, _, value = word.value.partition("=")
    name = name.rstrip("+")
    if not is_safe_environment(name):
        return (
            f"it sets {name} in the environment of the command, which can change what the command does "
            "(only locale, time zone and colour variables are known to be harmless)"
        )
    if word.unknown or not set(value) <= _SAFE_VALUE_CHARS:
        return f"it sets {name} to a value that is only known when it runs"
    return None


def shell_variable_problem(name: str) -> str | None:
    """Why assigning the shell variable `name` may affect later commands (None: it does not)."""
    base, bracket, subscript = name.rstrip("+").partition("[")
    if bracket and not subscript.rstrip("]").isdigit():
        return f"it assigns to {name}, whose subscript bash evaluates as arithmetic (which can run commands)"
    if is_safe_environment(base):
        return None
    if not any(ch.islower() for ch in base) or base.lower() in _LOWERCASE_ENVIRONMENT:
        return (
            f"it assigns {base}, which may be an environment variable that later commands read (such as PATH, "
            "IFS or GIT_*)"
        )
    return None


_SET_LETTERS = frozenset("euxvfnCEBbhHmPT")
_SET_OPTIONS = names(
    "pipefail errexit nounset xtrace verbose noglob noclobber errtrace functrace noexec physical notify"
)


def check_set(name: str, args: Sequence[Word]) -> Verdict:
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        i += 1
        if word.unknown:
            return Verdict.no(f"set's argument {word.raw} is only known when it runs")
        if text in ("--", "-"):
            return Verdict.ok("set only sets positional parameters")
        if text[:1] not in "-+" or len(text) < 2:
            return Verdict.ok("set only sets positional parameters")
        letters = text[1:]
        if letters.endswith("o"):  # -o NAME, also at the end of a bundle (-euo pipefail)
            option = args[i].value if i < len(args) else ""
            i += 1
            if option and option not in _SET_OPTIONS:
                return Verdict.no(f"set -o {option} changes how later commands are read or exported")
            letters = letters[:-1]
        bad = [ch for ch in letters if ch not in _SET_LETTERS]
        if bad:
            return Verdict.no(f"set {text[0]}{bad[0]} changes how later commands are read or exported")
    return Verdict.ok("set only changes error handling and tracing options")


def check_read(name: str, args: Sequence[Word]) -> Verdict:
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        text = word.value
        if word.unknown:
            return Verdict.no(f"read's argument {word.raw} is only known when it runs")
        if text.startswith("-") and len(text) > 1:
            letter = text[-1]
            if letter in "adinNptu" and len(text) == 2:
                if letter == "a" and i < len(args):
                    problem = shell_variable_problem(args[i].value)
                    if problem is not None:
                        return Verdict.no(problem)
                i += 1
            continue
        problem = shell_variable_problem(text)
        if problem is not None:
            return Verdict.no(problem)
    return Verdict.ok("read only reads a line into shell variables")


def check_plain(name: str, args: Sequence[Word]) -> Verdict:
    return Verdict.ok(f"{name} does not read or write files")


def check_jobs_wait(name: str, args: Sequence[Word]) -> Verdict:
    """`jobs -x command` runs the command; `wait -p name` assigns to name (a differential harness finding each)."""
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.unknown:
            return Verdict.no(f"{name}'s argument {word.raw} is only known when it runs")
        text = word.value
        if text == "--" or not text.startswith("-") or text == "-":
            break
        for k, letter in enumerate(text[1:], start=2):
            if name == "jobs" and letter == "x":
                return Verdict.no("jobs -x runs a command")
            if name == "wait" and letter == "p":
                variable = text[k:] or (args[i].value if i < len(args) else "")
                problem = shell_variable_problem(variable) if variable else None
                if problem is not None or (i < len(args) and args[i].unknown):
                    return Verdict.no(problem or f"wait -p assigns to {args[i].raw}, a name only known when it runs")
                break
    return Verdict.ok(f"{name} does not read or write files")


def check_cd(name: str, args: Sequence[Word]) -> Verdict:
    """cd/pushd/popd: the verdict carries the directory moved to, so later relative paths resolve against it."""
    operands = [w for w in args if not (w.value.startswith(("-", "+")) and len(w.value) > 1 and not w.unknown)]
    flags = [w.value for w in args if w not in operands]
    if name == "popd":
        return Verdict(True, "popd returns to an earlier directory", moves_directory=True, changes_directory=None)
    if name == "pushd" and (not operands or any(f.startswith("+") or f[1:].isdigit() for f in flags)):
        return Verdict.no("pushd without a directory swaps to a directory that is only known when it runs")
    if len(operands) > 1:
        return Verdict.no(f"{name} was given more than one directory")
    if not operands:
        return Verdict(True, f"{name} moves to the home directory", ("~",), changes_directory="~", moves_directory=True)
    target = operands[0]
    if target.unknown or target.pattern or target.value == "-":
        return Verdict.no(f"{name} {target.raw} moves to a directory that is only known when it runs")
    return Verdict(
        True,
        f"{name} only changes the directory",
        (target.value,),
        changes_directory=target.value,
        moves_directory=True,
    )


CHECKERS = {
    "set": check_set,
    "read": check_read,
    "cd": check_cd,
    "pushd": check_cd,
    "popd": check_cd,
    "dirs": check_plain,
    "exit": check_plain,
    "break": check_plain,
    "continue": check_plain,
    "return": check_plain,
    "shift": check_plain,
    "wait": check_jobs_wait,
    "jobs": check_jobs_wait,
    "times": check_plain,
    "help": check_plain,
}
