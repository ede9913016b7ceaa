"""What a Bash command does, in the terms the permission ladder needs: its simple commands, the words a rule
may match for each, and the files each reads and writes (resolved against the session's working directory).

The parsing and per-program knowledge live in `toolgate.shell.classify` (the classifier). This module only
reads its answer. When the classifier is not part of the build, every command is "cannot be checked" and so
is asked about (fail closed).
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast

# --- the classifier's answer, as this module reads it ------------------------------------------------------


class ShellRedirect(Protocol):
    @property
    def op(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def writes(self) -> bool: ...


class ShellCommand(Protocol):
    @property
    def argv(self) -> tuple[str, ...]: ...
    @property
    def effective_argv(self) -> tuple[str, ...]: ...
    @property
    def assignments(self) -> tuple[str, ...]: ...
    @property
    def redirects(self) -> Sequence[ShellRedirect]: ...
    @property
    def text(self) -> str: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def write_targets(self) -> tuple[str, ...]: ...
    @property
    def read_targets(self) -> tuple[str, ...]: ...


class ShellClassification(Protocol):
    @property
    def command(self) -> str: ...
    @property
    def parsed(self) -> bool: ...
    @property
    def operators(self) -> tuple[str, ...]: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def commands(self) -> Sequence[ShellCommand]: ...
    @property
    def has_substitution(self) -> bool: ...
    @property
    def raw_check_failures(self) -> tuple[str, ...]: ...
    @property
    def write_targets(self) -> tuple[str, ...]: ...


Classifier = Callable[[str], ShellClassification]


@dataclass(frozen=True, slots=True)
class Unclassified:
    """The answer when no classifier is available: nothing is known, so nothing is read-only."""

    command: str
    reason: str = "the shell command classifier is not part of this build, so no command can be checked"
    parsed: bool = False
    read_only: bool = False
    commands: tuple[ShellCommand, ...] = ()
    operators: tuple[str, ...] = ()
    has_substitution: bool = False
    raw_check_failures: tuple[str, ...] = ()
    write_targets: tuple[str, ...] = ()


def load_classifier() -> Classifier:
    """The real classifier if this build has one; otherwise one that fails closed."""
    try:
        module = importlib.import_module("toolgate.shell.classify")
    except ImportError:
        return Unclassified
    return cast(Classifier, module.classify)


# --- tables ------------------------------------------------------------------------------------------------

# Environment assignments that cannot change what a program runs or where it reads code from. Any other
# assignment (PATH, LD_PRELOAD, GIT_*, PAGER, NODE_OPTIONS, PYTHONPATH, ...) keeps a command from being
# allowed by a rule or by being read-only.
SAFE_ENV = frozenset(
    {
        "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "LC_COLLATE", "LC_NUMERIC", "LC_TIME", "TZ",
        "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLORTERM", "TERM", "COLUMNS", "LINES",
        "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "CI", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS_QUIET", "TIME_STYLE",
    }
)  # fmt: skip
_SAFE_ENV_VALUE = re.compile(r"[A-Za-z0-9_./:,+@%=-]*")
# Wrappers a rule may look through (`timeout 60 git log` is `git log` for an allow rule): they change how
# long or how nicely a program runs, never which program. Deny and ask rules look through every wrapper.
SAFE_WRAPPERS = frozenset({"timeout", "time", "nice", "nohup", "stdbuf", "ionice"})
_WRAPPER_ARG = re.compile(r"-.*|[0-9][0-9.]*[smhd]?|[A-Z][A-Z0-9]*|--")
# In acceptEdits, these file-system commands are allowed when every path they touch is in a working dir.
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp"})
REMOVAL_COMMANDS = frozenset({"rm", "rmdir", "unlink", "shred"})
DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_FD_TARGET = re.compile(r"&?(\d+|-)")
_GLOB = re.compile(r"[*?\[]")
_EXPANSION = re.compile(r"[$`]|^~[^/]|<\(|>\(")


# --- what one simple command does --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GlobWrite:
    raw: str  # as written
    base: Path  # the fixed directory part, resolved
    tail: str  # the rest of the pattern, below `base`


@dataclass(slots=True)
class CommandPart:
    text: str
    argv: tuple[str, ...]
    program: str  # the effective program's name
    deny_forms: list[tuple[str, ...]]  # word lists a deny/ask rule is matched against (any may match)
    allow_forms: list[tuple[str, ...]]  # word lists an allow rule may match (empty: none may)
    # Allow rules may match its words (exact, prefix, glob): no substitution anywhere in the command, no write
    # redirection. Otherwise only an exact rule naming the whole command text, as written, covers it.
    words_ok: bool
    read_only: bool
    classifier_reason: str
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    glob_writes: list[GlobWrite] = field(default_factory=list)
    unresolved_reads: list[str] = field(default_factory=list)
    unresolved_writes: list[str] = field(default_factory=list)

    @property
    def removes(self) -> bool:
        return self.program in REMOVAL_COMMANDS


@dataclass(slots=True)
class BashFacts:
    command: str
    read_only: bool
    opaque: str | None  # why the command cannot be checked at all (not parsed, obfuscation), or None
    parts: list[CommandPart]
    crude_forms: list[tuple[str, ...]]  # rough word lists, for deny rules when the structure is incomplete
    has_substitution: bool
    dotglob: bool  # the command may change how globs expand (shopt/set), so a glob may reach dot files


def _safe_assignment(assignment: str) -> bool:
    name, _, value = assignment.partition("=")
    return name in SAFE_ENV and _SAFE_ENV_VALUE.fullmatch(value) is not None


def _wrapper_prefix_is_safe(words: Sequence[str]) -> bool:
    if not words or Path(words[0]).name not in SAFE_WRAPPERS:
        return False
    return all(Path(w).name in SAFE_WRAPPERS or _WRAPPER_ARG.fullmatch(w) is not None for w in words[1:])


def _program(words: Sequence[str]) -> str:
    return Path(words[0]).name if words else ""


def _forms(cmd: ShellCommand) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    argv, effective = tuple(cmd.argv), tuple(cmd.effective_argv)
    deny = [f for f in dict.fromkeys((argv, effective)) if f]
    allow: list[tuple[str, ...]] = []
    if all(_safe_assignment(a) for a in cmd.assignments):
        if argv:
            allow.append(argv)
        stripped = len(argv) - len(effective)
        if effective and stripped > 0 and argv[stripped:] == effective and _wrapper_prefix_is_safe(argv[:stripped]):
            allow.append(effective)
    return deny, allow


def _harmless(target: str) -> bool:
    return target in _HARMLESS_TARGETS or _FD_TARGET.fullmatch(target) is not None


@dataclass(slots=True)
class _Cwd:
    """Where relative paths are relative to. The classifier already joins a `cd`'s directory onto the paths of
    the commands after it; that is only certain in a plain `&&` chain (a failed cd stops it). Anywhere else a
    cd may not have happened, and after a cd to a directory only known at run time nothing can be placed."""

    base: Path
    unsure: str | None = None


def _resolve(raw: str, cwd: _Cwd, home: Path) -> list[Path] | str:
    """The absolute path `raw` names, or why it cannot be known before the command runs."""
    if "\x00" in raw:
        return "it contains a NUL byte"
    if _EXPANSION.search(raw):
        return "it is expanded by the shell when the command runs"
    if raw == "~" or raw.startswith("~/"):
        return [Path(os.path.normpath(str(home) + raw[1:]))]
    if raw.startswith("/"):
        return [Path(os.path.normpath(raw))]
    if cwd.unsure:
        return cwd.unsure
    return [Path(os.path.normpath(cwd.base / raw))]


def _glob_base(raw: str) -> tuple[str, str]:
    """(the fixed directory part, the pattern below it): `src/*.py` → (`src`, `*.py`)."""
    parts = raw.split("/")
    fixed: list[str] = []
    for part in parts:
        if _GLOB.search(part):
            break
        fixed.append(part)
    base = "/".join(fixed)
    tail = "/".join(parts[len(fixed) :])
    return (base if base else ("/" if raw.startswith("/") else ".")), tail


def _after_directory_change(cmd: ShellCommand, cwd: _Cwd, and_chain: bool) -> None:
    words = [w for w in cmd.effective_argv[1:] if w != "--"]
    args = [w for w in words if not (w.startswith("-") and w != "-")]
    name = _program(cmd.effective_argv)
    text = cmd.text.strip()
    if name == "popd" or (args and (args[0] == "-" or _EXPANSION.search(args[0]) or _GLOB.search(args[0]))):
        cwd.unsure = f"it runs after `{text}`, which moves to a directory only known when the command runs"
    elif not and_chain:
        cwd.unsure = cwd.unsure or f"it runs after `{text}` without `&&`, so the directory change may not have happened"


_CRUDE_SPLIT = re.compile(r"[;&|()\n`{}<>]|\$\(")


def crude_forms(command: str) -> list[tuple[str, ...]]:
    """Rough word lists for every command-looking piece of `command`, for deny rules when the parse is
    incomplete (a substitution, or no parse at all). Quotes are removed, wrappers and assignments skipped."""
    forms: list[tuple[str, ...]] = []
    for piece in _CRUDE_SPLIT.split(command.replace("\\\n", " ")):
        words = [w for w in re.sub(r"[\"'\\]", "", piece).split() if w]
        while words and ("=" in words[0] and not words[0].startswith("=")):
            words.pop(0)
        while words:
            form = tuple(words)
            if form not in forms:
                forms.append(form)
            if Path(words[0]).name not in _LOOK_THROUGH:
                break
            words.pop(0)
            while words and (words[0].startswith("-") or _WRAPPER_ARG.fullmatch(words[0]) or "=" in words[0]):
                words.pop(0)
    return forms


_LOOK_THROUGH = frozenset(
    {*SAFE_WRAPPERS, "sudo", "doas", "env", "command", "builtin", "exec", "xargs", "nohup", "then", "do", "else"}
)


def analyze(command: str, classification: ShellClassification, cwd: Path, home: Path) -> BashFacts:
    opaque: str | None = None
    if classification.raw_check_failures:
        opaque = "it contains " + "; ".join(classification.raw_check_failures)
    elif not classification.parsed:
        opaque = classification.reason or "it could not be parsed"
    state = _Cwd(cwd)
    commands = list(classification.commands)
    operators = tuple(classification.operators)
    and_chain = (
        not classification.has_substitution
        and len(operators) == len(commands) - 1
        and all(op == "&&" for op in operators)
    )
    parts: list[CommandPart] = []
    dotglob = False
    moved = False
    for cmd in commands:
        deny, allow = _forms(cmd)
        # Read-only only when the words that run are the ones judged: no unsafe assignment, and no wrapper
        # (sudo, env, xargs, ...) other than the harmless ones between them and the command line.
        effective = tuple(cmd.effective_argv) or tuple(cmd.argv)
        program = _program(cmd.effective_argv or cmd.argv)
        dotglob = dotglob or program in ("shopt", "set", "setopt")
        write_redirect = any(r.writes and not _harmless(r.target) for r in cmd.redirects)
        part = CommandPart(
            text=cmd.text,
            argv=tuple(cmd.argv),
            program=program,
            deny_forms=deny,
            allow_forms=allow,
            words_ok=not classification.has_substitution and not write_redirect,
            read_only=bool(cmd.read_only) and effective in allow,
            classifier_reason=cmd.reason,
        )
        reads = list(cmd.read_targets)
        writes = list(cmd.write_targets)
        if not moved:
            # Redirection targets, in case the classifier left them out of its lists. After a cd the classifier's
            # lists hold them relative to the new directory, and the raw ones would name the wrong place.
            reads += [r.target for r in cmd.redirects if not r.writes and r.op in ("<", "<>") and r.target]
            writes += [r.target for r in cmd.redirects if r.writes]
        for raw in dict.fromkeys(reads):
            if _harmless(raw):
                continue
            target = _glob_base(raw)[0] if _GLOB.search(raw) else raw
            resolved = _resolve(target, state, home)
            if isinstance(resolved, str):
                part.unresolved_reads.append(f"{raw} ({resolved})")
            else:
                part.reads.extend(p for p in resolved if p not in part.reads)
        for raw in dict.fromkeys(writes):
            if _harmless(raw):
                continue
            if _GLOB.search(raw):
                base, tail = _glob_base(raw)
                resolved = _resolve(base, state, home)
                if isinstance(resolved, str):
                    part.unresolved_writes.append(f"{raw} ({resolved})")
                else:
                    part.glob_writes.extend(GlobWrite(raw, p, tail) for p in resolved)
                continue
            resolved = _resolve(raw, state, home)
            if isinstance(resolved, str):
                part.unresolved_writes.append(f"{raw} ({resolved})")
            else:
                part.writes.extend(p for p in resolved if p not in part.writes)
        parts.append(part)
        if program in DIRECTORY_CHANGES:
            _after_directory_change(cmd, state, and_chain)
            moved = True

    # Write targets the classifier reports for the whole command but did not attribute to a simple command.
    attributed = {w for c in classification.commands for w in (*c.write_targets, *(r.target for r in c.redirects))}
    orphans = [w for w in classification.write_targets if w not in attributed and not _harmless(w)]
    if orphans:
        opaque = opaque or f"it writes {', '.join(orphans)} from a part of the command that cannot be checked alone"

    incomplete = opaque is not None or classification.has_substitution
    return BashFacts(
        command=command,
        read_only=bool(classification.read_only) and opaque is None and all(p.read_only for p in parts),
        opaque=opaque,
        parts=parts,
        crude_forms=crude_forms(command) if incomplete else [],
        has_substitution=classification.has_substitution,
        dotglob=dotglob,
    )


def exact_text(command: str) -> str:
    """The form an exact rule is compared with when it names a whole (possibly compound) command."""
    return " ".join(command.strip().split())


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
