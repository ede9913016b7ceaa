"""Is this command read-only? A verdict for the whole command and for every simple command in it.

Read-only means: the raw text passes the security checks, bashlex parsed it and every construct in it is
modelled, nothing is substituted ($(…), `…`, <(…), >(…)), no function is defined, no redirection writes
(except to /dev/null and fd duplications), no variable that later commands might read is set, and every
simple command is read-only by its program's table. Anything else is not read-only, with the first reason
in plain words. The permission engine also gets each simple command's argv, its own verdict and the paths
it reads and writes.

Pure: no I/O. Paths are reported as written (relative paths are resolved by the caller against the
session's working directory), except that a `cd` earlier in the same shell is applied to later relative paths.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from toolgate.bash.parse import ParsedCommand, ParsedScript, Redirect, Word, parse
from toolgate.bash.plain import parse_plain
from toolgate.bash.programs import EVAL_LIKE, PROGRAMS, WRAPPERS, Verdict, unwrap
from toolgate.bash.programs.builtins import prefix_assignment_problem, shell_variable_problem
from toolgate.bash.quoting import scan
from toolgate.bash.security import MAX_COMMAND_CHARS, raw_check

__all__ = ["Classification", "Redirect", "SimpleCommand", "classify"]

# How deep xargs and wrappers may nest (`xargs timeout 5 xargs …`) before we stop following.
MAX_NESTING = 8
# Devices that read or write no file worth a permission check.
HARMLESS_DEVICES = frozenset(
    {"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty"}
)
# How many combinations of loop values one command is checked with (`for a in …; for b in …`).
MAX_LOOP_COMBINATIONS = 32


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    argv: tuple[str, ...]  # after quote removal, as written (wrappers and env prefixes not removed)
    effective_argv: tuple[str, ...]  # after looking through wrappers (timeout, time, nice, nohup, stdbuf, env)
    assignments: tuple[str, ...]  # NAME=value prefixes
    redirects: tuple[Redirect, ...]
    text: str  # this simple command's source text
    read_only: bool
    reason: str  # why (not) read-only, in plain words
    write_targets: tuple[str, ...]  # redirection targets, destinations of cp/mv/rm/tee/…, sed -i files, …
    read_targets: tuple[str, ...]  # path-looking arguments it reads (best effort; for path checks)
    in_substitution: bool = False  # runs inside $(…), `…`, <(…) or >(…)
    in_function: bool = False  # part of a function body (runs only if the function is called)


@dataclass(frozen=True, slots=True)
class Classification:
    command: str
    parsed: bool  # bashlex parsed it and every construct is modelled
    read_only: bool
    reason: str  # first reason it is not read-only, or a short "read-only" explanation
    commands: tuple[SimpleCommand, ...]
    operators: tuple[str, ...]  # ";", "&&", "||", "|", "|&", "&", "\n" seen between commands
    has_substitution: bool  # $(…), `…`, <(…), >(…)
    raw_check_failures: tuple[str, ...]  # reasons from the raw-text checks
    write_targets: tuple[str, ...]  # all commands' write targets
    # The effective argv of the command whose exit status is the whole command's (empty when unclear).
    final_argv: tuple[str, ...] = ()


@dataclass(slots=True)
class _Directories:
    """Where each shell scope is, as far as the text tells: "" = where it started, None = not known."""

    current: dict[tuple[int, ...], str | None] = field(default_factory=dict)
    stacks: dict[tuple[int, ...], list[str | None]] = field(default_factory=dict)
    moved: set[tuple[int, ...]] = field(default_factory=set)

    def lookup(self, scope: tuple[int, ...]) -> tuple[str | None, bool]:
        """(directory, whether any cd happened in this scope or an enclosing one)."""
        for length in range(len(scope), -1, -1):
            prefix = scope[:length]
            if prefix in self.current:
                return self.current[prefix], True
        return "", False

    def move(self, scope: tuple[int, ...], verdict: Verdict, name: str) -> None:
        here, _ = self.lookup(scope)
        stack = self.stacks.setdefault(scope, [])
        if name == "popd":
            self.current[scope] = stack.pop() if stack else None
            return
        if name == "pushd":
            stack.append(here)
        target = verdict.changes_directory
        self.current[scope] = None if target is None or here is None else _join(here, target)


def _join(base: str, path: str) -> str:
    if not base or path.startswith(("/", "~")):
        return path
    return posixpath.join(base, path)


def _names(words: Sequence[Word]) -> tuple[str, ...]:
    return tuple(w.value for w in words)


def _program_verdict(words: Sequence[Word], depth: int = 0) -> tuple[Verdict, tuple[Word, ...]]:
    """The verdict for a command's words (wrappers looked through), and the words it finally runs."""
    current = list(words)
    while current and not current[0].unknown and current[0].value in WRAPPERS:
        name = current[0].value
        unwrapped = unwrap(name, current[1:])
        if unwrapped.problem is not None:
            return Verdict.no(unwrapped.problem), tuple(current)
        for assignment in unwrapped.environment:
            problem = prefix_assignment_problem(assignment)
            if problem is not None:
                return Verdict.no(problem.replace("in the environment of", "through env for")), tuple(current)
        current = unwrapped.command
        if not current:
            return Verdict.ok(f"{name} with no command only reports"), ()
    if not current:
        return Verdict.ok("no program runs"), ()
    head = current[0]
    name = head.value
    if head.unknown:
        return Verdict.no(f"the program name {head.raw} is only known when it runs"), tuple(current)
    if head.pattern:
        return Verdict.no(f"the program name {head.raw} is a pattern that bash expands"), tuple(current)
    if "/" in name:
        return (
            Verdict.no(f"{name} is run by its path, so it is not the system program this checker knows"),
            tuple(current),
        )
    if name in EVAL_LIKE:
        return Verdict.no(EVAL_LIKE[name]), tuple(current)
    checker = PROGRAMS.get(name)
    if checker is None:
        return Verdict.no(f"{name} is not a program this checker knows to be read-only"), tuple(current)
    verdict = checker(name, current[1:])
    if verdict.read_only and verdict.runs is not None:
        if depth >= MAX_NESTING:
            return Verdict.no(f"{name} nests commands too deeply to check"), tuple(current)
        inner, _ = _program_verdict(verdict.runs, depth + 1)
        if not inner.read_only:
            return Verdict.no(f"{name} runs a command that is not read-only: {inner.reason}", inner.writes), tuple(
                current
            )
        return Verdict.ok(f"{name} runs a read-only command ({inner.reason})", [*verdict.reads, *inner.reads]), tuple(
            current
        )
    return verdict, tuple(current)


def _loop_values(script: ParsedScript) -> dict[str, tuple[Word, ...]]:
    """Loop variables whose values are all in the text (`for f in *.py a.txt`) and that nothing reassigns."""
    assigned = {a.value.partition("=")[0] for c in script.commands for a in c.assignments}
    assigned |= {w.value for c in script.commands if c.words[:1] and c.words[0].value == "read" for w in c.words}
    names = [variable.value for variable, _ in script.loops]
    values: dict[str, tuple[Word, ...]] = {}
    for variable, items in script.loops:
        name = variable.value
        if items and names.count(name) == 1 and name not in assigned and not any(w.unknown for w in items):
            values[name] = items
    return values


def _with_loop_values(words: tuple[Word, ...], loops: Mapping[str, tuple[Word, ...]]) -> list[tuple[Word, ...]]:
    """Each way `words` can read once loop variables used as whole words ("$f", ${f}) take their values."""
    slots: list[tuple[Word, ...]] = []
    for word in words:
        name = word.raw.strip('"')
        name = name[2:-1] if name.startswith("${") and name.endswith("}") else name[1:] if name[:1] == "$" else ""
        slots.append(loops.get(name, (word,)))
    combos = 1
    for slot in slots:
        combos *= len(slot)
    if combos > MAX_LOOP_COMBINATIONS:
        return [words]
    return [tuple(choice) for choice in itertools.product(*slots)]


def _verdict_over_loops(
    words: tuple[Word, ...], loops: Mapping[str, tuple[Word, ...]]
) -> tuple[Verdict, tuple[Word, ...]]:
    """The verdict for `words` with every value its loop variables can take; the words it runs, as written."""
    verdict, effective = _program_verdict(words)
    variants = _with_loop_values(words, loops) if loops else [words]
    if variants == [words]:
        return verdict, effective
    reads: list[str] = []
    writes: list[str] = []
    for variant in variants:
        each, _ = _program_verdict(variant)
        if not each.read_only:
            return each, effective
        reads.extend(each.reads)
        writes.extend(each.writes)
    return Verdict(True, each.reason, tuple(reads), tuple(writes)), effective


def _simple(
    parsed: ParsedCommand,
    text: str,
    dirs: _Directories,
    moved_before_git: bool,
    loops: Mapping[str, tuple[Word, ...]],
) -> SimpleCommand:
    words = parsed.words
    verdict, effective = _verdict_over_loops(words, loops)
    reads = list(verdict.reads)
    writes = list(verdict.writes)
    problem: str | None = None if verdict.read_only else verdict.reason

    for redirect in parsed.redirects:
        if redirect.writes:
            writes.append(redirect.target)
            problem = problem or f"it writes to {redirect.target or 'a file'} through a redirection ({redirect.op})"
        elif redirect.op in ("<", "<>") and redirect.target:
            reads.append(redirect.target)
            if redirect.expansion:
                problem = problem or f"it reads {redirect.target}, a path only known when the command runs"

    if not words:
        for assignment in parsed.assignments:
            problem = problem or shell_variable_problem(assignment.value.partition("=")[0])
    else:
        for assignment in parsed.assignments:
            problem = problem or prefix_assignment_problem(assignment)

    directory, moved = dirs.lookup(parsed.scope)
    name = effective[0].value if effective else ""
    if name == "git" and (moved or moved_before_git) and problem is None:
        problem = (
            "it runs git after changing directory, and a directory can hold a planted repository whose "
            "configuration runs programs"
        )
    if directory is None and (reads or writes) and problem is None:
        problem = "it runs after a cd to a directory only known when it runs, so its paths cannot be checked"
    if directory:
        reads = [_join(directory, p) for p in reads]
        writes = [_join(directory, p) for p in writes]
    reads = [p for p in reads if p not in HARMLESS_DEVICES]
    if verdict.moves_directory and not parsed.in_function:
        dirs.move(parsed.scope, verdict, name)

    start, end = parsed.span
    return SimpleCommand(
        argv=_names(words),
        effective_argv=_names(effective),
        assignments=_names(parsed.assignments),
        redirects=parsed.redirects,
        text=text[start:end],
        read_only=problem is None,
        reason=verdict.reason if problem is None else problem,
        write_targets=tuple(dict.fromkeys(writes)),
        read_targets=tuple(dict.fromkeys(reads)),
        in_substitution=parsed.in_substitution,
        in_function=parsed.in_function,
    )


def _summary(commands: Sequence[SimpleCommand]) -> str:
    if not commands:
        return "read-only: there is nothing to run (only blank lines or comments)"
    if len(commands) == 1:
        return f"read-only: {commands[0].reason}"
    names = ", ".join(dict.fromkeys(c.effective_argv[0] for c in commands if c.effective_argv))
    return f"read-only: every part only reads ({names})"


@lru_cache(maxsize=2048)
def classify(command: str) -> Classification:
    """The verdict for `command` (cached: the result is immutable)."""
    return classify_uncached(command)


def classify_uncached(command: str) -> Classification:
    if len(command) > MAX_COMMAND_CHARS:
        # The raw check already says no; scanning and parsing it would only cost time.
        failures = raw_check(command)
        script = ParsedScript(problems=[failures[0]])
    else:
        info = scan(command)
        failures = raw_check(command, info)
        # Most commands are plain words and operators: their parse is certain without bashlex (shell.plain).
        plain = parse_plain(command, info)
        script = plain if plain is not None else parse(command, info)
    dirs = _Directories()
    commands: list[SimpleCommand] = []
    loops = _loop_values(script)
    for parsed in script.commands:
        # A cd anywhere earlier in the command (even in a sibling scope) is enough to distrust a later git.
        moved_before = any(c.effective_argv[:1] in (("cd",), ("pushd",), ("popd",)) for c in commands)
        commands.append(_simple(parsed, command, dirs, moved_before, loops))

    reasons: list[str] = list(failures)
    reasons.extend(script.problems)
    if script.has_substitution:
        reasons.append("it runs a command substitution ($(…), `…`) or process substitution (<(…), >(…))")
    if script.functions:
        reasons.append(f"it defines a shell function ({script.functions[0]}), which can replace a command name")
    for variable in script.loop_variables:
        problem = shell_variable_problem(variable.value)
        if problem is not None:
            reasons.append(problem)
    reasons.extend(c.reason for c in commands if not c.read_only)

    final = script.final_command
    final_argv: tuple[str, ...] = ()
    if final is not None:
        for simple, parsed in zip(commands, script.commands, strict=True):
            if parsed is final:
                final_argv = simple.effective_argv
    read_only = not reasons
    return Classification(
        command=command,
        parsed=not script.problems,
        read_only=read_only,
        reason=_summary(commands) if read_only else reasons[0],
        commands=tuple(commands),
        operators=tuple(script.operators),
        has_substitution=script.has_substitution,
        raw_check_failures=failures,
        write_targets=tuple(dict.fromkeys(t for c in commands for t in c.write_targets)),
        final_argv=final_argv,
    )
