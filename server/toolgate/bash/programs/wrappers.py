"""Commands that run another command: wrappers the classifier looks through, and xargs.

`timeout 5 git log` is as read-only as `git log`, so the classifier takes the wrapper (and its options) off
and checks what is left. `env` is looked through the same way; the variables it sets must pass the same
rule as `NAME=value git log`. xargs is different: it runs its command with extra arguments taken from its
input, so that command is checked with an argument nobody can see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Verdict, names


@dataclass(slots=True)
class Unwrapped:
    command: list[Word]  # what the wrapper runs (empty: nothing)
    environment: list[Word] = field(default_factory=list)  # NAME=value words given to env
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class _WrapperSpec:
    flags: frozenset[str]  # options without a value
    valued: frozenset[str]  # options that take a value (separate or attached)
    forbidden: dict[str, str]
    operands_before_command: int = 0  # timeout's DURATION

    def long_names(self) -> list[str]:
        return [o for o in (*self.flags, *self.valued, *self.forbidden) if o.startswith("--")]


WRAPPERS: dict[str, _WrapperSpec] = {
    "timeout": _WrapperSpec(
        frozenset({"--preserve-status", "--foreground", "-v", "--verbose"}),
        frozenset({"-s", "--signal", "-k", "--kill-after"}),
        {},
        operands_before_command=1,
    ),
    "nice": _WrapperSpec(frozenset(), frozenset({"-n", "--adjustment"}), {}),
    "nohup": _WrapperSpec(frozenset(), frozenset(), {}),
    "stdbuf": _WrapperSpec(frozenset(), frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), {}),
    "time": _WrapperSpec(
        frozenset({"-p", "--portability", "-v", "--verbose", "-q", "--quiet"}),
        # -o/--output take a value too; they are refused below, but the deny forms must still skip the value.
        frozenset({"-f", "--format", "-o", "--output"}),
        {
            "-o": "time -o writes its report to a file",
            "--output": "time --output writes its report to a file",
            "-a": "time -a appends its report to a file",
            "--append": "time --append appends its report to a file",
        },
    ),
    "env": _WrapperSpec(
        frozenset({"-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"}),
        frozenset({"-u", "--unset", "-S", "--split-string", "-C", "--chdir"}),
        {
            "-S": "env -S splits a string into a command, which this checker cannot see",
            "--split-string": "env --split-string splits a string into a command, which this checker cannot see",
            "-C": "env -C runs the command in another directory",
            "--chdir": "env --chdir runs the command in another directory",
        },
    ),
}


def _resolve(name: str, spec: _WrapperSpec) -> str:
    """getopt_long abbreviations: an unambiguous prefix of a long option means that option."""
    if not name.startswith("--") or name in spec.long_names():
        return name
    matches = [o for o in spec.long_names() if o.startswith(name)]
    return matches[0] if len(matches) == 1 else name


def _short_cluster(name: str, spec: _WrapperSpec, text: str) -> tuple[str | None, bool]:
    """(why the short options in `text` are not safe or None, whether the last one takes the next word)."""
    if text == "-":
        return (None if "-" in spec.flags else f"{name} - is an option this checker does not know"), False
    for k, letter in enumerate(text[1:], start=2):
        option = "-" + letter
        if option in spec.forbidden:
            return spec.forbidden[option], False
        if option in spec.valued:
            return None, k == len(text)
        if option not in spec.flags:
            return f"{name} {option} is an option this checker does not know", False
    return None, False


def unwrap(name: str, args: Sequence[Word]) -> Unwrapped:
    """Take the wrapper `name` and its options off `args`."""
    spec = WRAPPERS[name]
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if word.unknown or (word.pattern and text[:1] in "*?[{-"):
            return Unwrapped([], problem=f"{name}'s argument {word.raw} is only known when it runs")
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or (text == "-" and name != "env"):
            break
        if name == "nice" and text[1:].lstrip("-").isdigit():
            i += 1  # nice -10
            continue
        if not text.startswith("--"):
            # A cluster (-vS 'cmd' is -v -S 'cmd': a differential harness finding): each letter in turn, up to
            # one that takes a value (attached, or the next word).
            problem, takes_next = _short_cluster(name, spec, text)
            if problem is not None:
                return Unwrapped([], problem=problem)
            i += 2 if takes_next else 1
            continue
        option, eq, _ = text.partition("=")
        option = _resolve(option, spec)
        if option in spec.forbidden:
            return Unwrapped([], problem=spec.forbidden[option])
        if option in spec.valued:
            i += 1 if eq else 2
            continue
        if option in spec.flags:
            i += 1
            continue
        return Unwrapped([], problem=f"{name} {text} is an option this checker does not know")
    rest = list(args[i:])
    environment: list[Word] = []
    if name == "env":
        while rest and "=" in rest[0].value and not rest[0].value.startswith("="):
            environment.append(rest.pop(0))
    skip = spec.operands_before_command
    if len(rest) < skip:
        return Unwrapped([], environment)
    return Unwrapped(rest[skip:], environment)


_XARGS_FLAGS = names(
    "-0 --null -p --interactive -r --no-run-if-empty -t --verbose -x --exit -o --open-tty --show-limits"
)
_XARGS_VALUED = names(
    "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars --process-slot-var"
)
# Options whose value is optional and so only ever attached: `-i{}`, `--eof=END`, `--max-lines=2`.
_XARGS_OPTIONAL_VALUE = names("-i --replace -e --eof -l --max-lines")

# Programs that run another command but that the classifier never looks through as read-only (they change
# who runs it, where, or when); deny and ask rules still see the command behind them. The options of each
# that take a separate value.
_RUNNERS: dict[str, frozenset[str]] = {
    "sudo": names("-u -g -C -D -h -p -r -t -U -T --user --group --close-from --chdir --host --prompt --role --type"),
    "doas": names("-u -C"),
    "ionice": names("-c -n -p -t --class --classdata --pid --pgid --uid"),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": names("-a"),
    "setsid": frozenset(),
    "chroot": names("--userspec --groups"),
    "flock": names("-w -E -c --timeout --conflict-exit-code --command"),
    "watch": names("-n -d --interval"),
    "strace": names("-o -e -p -s -u -P -E"),
    "unbuffer": frozenset(),
    "caffeinate": names("-t -w"),
}


def value_options(name: str) -> frozenset[str] | None:
    """The options of the wrapper `name` that take a separate value; None when `name` runs no other command.

    The one table both the classifier (above, `unwrap`) and the rule matcher (permissions/command_forms.py,
    which looks through every wrapper for deny and ask rules) read."""
    if name in WRAPPERS:
        return WRAPPERS[name].valued
    if name == "xargs":
        return _XARGS_VALUED
    return _RUNNERS.get(name)


WRAPPER_NAMES = frozenset({*WRAPPERS, "xargs", *_RUNNERS})


def check_xargs(name: str, args: Sequence[Word]) -> Verdict:
    """xargs itself only reads its input; what it runs gets an argument taken from that input."""
    replace: str | None = None
    reads: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if word.unknown or word.pattern:
            return Verdict.no(f"xargs's argument {word.raw} is only known when it runs")
        if not text.startswith("-") or text == "-":
            break
        i += 1
        if text == "--":
            break
        option, eq, inline = text.partition("=") if text.startswith("--") else (text[:2], "", text[2:])
        if option in ("-i", "--replace"):  # -i[R], --replace[=R]: an optional value, "{}" without one
            replace = inline or "{}"
            continue
        if option in _XARGS_OPTIONAL_VALUE:
            continue  # -e[EOF], -l[LINES], --eof[=EOF], --max-lines[=N]: optional attached values
        if option in _XARGS_VALUED:
            value = inline if (eq or inline) else (args[i].value if i < len(args) else "")
            if not (eq or inline):
                i += 1
            if option in ("-I", "--replace"):
                replace = value
            if option in ("-a", "--arg-file"):
                reads.append(value)
            continue
        if option in _XARGS_FLAGS or text in _XARGS_FLAGS:
            continue
        return Verdict.no(f"xargs {text} is an option this checker does not know")
    command = list(args[i:]) or [Word.literal("echo")]
    unseen = Word(raw="<arguments read from its input>", value="<arguments read from its input>", expansion=True)
    if replace is None:
        runs = (*command, unseen)
    else:
        runs = tuple(Word(raw=w.raw, value=w.value, expansion=True) if replace in w.value else w for w in command)
    return Verdict(True, "xargs runs a command with arguments taken from its input", tuple(reads), runs=runs)
