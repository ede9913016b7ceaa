"""What a Bash command does, in the terms the permission ladder needs: its simple commands, the words a rule
may match for each, and the files each reads and writes (resolved against the session's working directory).

The parsing and per-program knowledge live in `toolgate.bash.classify` (the classifier). This module only
reads its answer, through the protocols of `toolgate.permissions.shell_classification` (re-exported here).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from toolgate.bash.security import environment_exposure
from toolgate.permissions.command_forms import allow_forms, crude_forms, deny_forms, program_name
from toolgate.permissions.repo_config import configured_program
from toolgate.permissions.shell_classification import Classifier as Classifier
from toolgate.permissions.shell_classification import ShellClassification as ShellClassification
from toolgate.permissions.shell_classification import ShellCommand
from toolgate.permissions.shell_classification import Unclassified as Unclassified
from toolgate.permissions.shell_classification import load_classifier as load_classifier
from toolgate.text.braces import expand_braces

# --- tables ------------------------------------------------------------------------------------------------

# In acceptEdits, these file-system commands are allowed when every path they touch is in a working dir.
ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "mv", "cp"})
REMOVAL_COMMANDS = frozenset({"rm", "rmdir", "unlink", "shred"})
DIRECTORY_CHANGES = frozenset({"cd", "pushd", "popd"})
# Programs that read whole directory trees when given a directory (with `-r` for grep and cp).
RECURSIVE_READERS = frozenset({"rg", "ag", "ack", "tar", "zip", "rsync", "scp", "du", "tree", "find"})
RECURSIVE_WITH_FLAG = frozenset({"grep", "egrep", "fgrep", "cp", "ls", "diff", "chmod", "chown"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_FD_TARGET = re.compile(r"&?(\d+|-)")
_GLOB = re.compile(r"[*?\[]")
_EXPANSION = re.compile(r"[$`]|^~[^/]|<\(|>\(")
_HEREDOC = re.compile(r"<<(?!<)-?[ \t]*(\S)")


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
    dynamic_program: bool = False  # which program runs is only known at run time (`$cmd`, `$(…) args`)
    read_only_but_redirects: bool = False  # read-only apart from its write redirections (`echo x > f`)
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    glob_reads: list[GlobWrite] = field(default_factory=list)
    glob_writes: list[GlobWrite] = field(default_factory=list)
    tree_reads: list[Path] = field(default_factory=list)  # directories it reads recursively
    # For a program the classifier cannot vouch for: every argument that names a path, since it may read or
    # write it (checked against deny/ask path rules and the safety checks), and whether any argument is only
    # known at run time.
    arg_paths: list[Path] = field(default_factory=list)
    dynamic_args: bool = False
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
    # Why the whole command is not read-only although each part is (a substitution, a function definition,
    # a variable set for later commands): such a command is never allowed by its parts alone.
    command_level: str | None = None
    # Why the command may show environment values (`env`, `echo $GITHUB_TOKEN`): asked in every mode.
    exposure: str | None = None
    # The analysis asked the file system (is this argument a directory?), so it may differ on the next call.
    probed_files: bool = False


def _harmless(target: str) -> bool:
    return target in _HARMLESS_TARGETS or _FD_TARGET.fullmatch(target) is not None


@dataclass(slots=True)
class _Cwd:
    """Where relative paths are relative to. The classifier already joins a `cd`'s directory onto the paths of
    the commands after it; that is only certain in a plain `&&` chain (a failed cd stops it). Anywhere else a
    cd may not have happened, and after a cd to a directory only known at run time nothing can be placed."""

    base: Path
    unsure: str | None = None
    probed: bool = False  # an answer came from the file system (see `_is_dir`)


def _is_dir(path: Path, state: _Cwd) -> bool:
    state.probed = True
    return os.path.isdir(path)


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
    name = program_name(cmd.effective_argv)
    text = cmd.text.strip()
    if name == "popd" or (args and (args[0] == "-" or _EXPANSION.search(args[0]) or _GLOB.search(args[0]))):
        cwd.unsure = f"it runs after `{text}`, which moves to a directory only known when the command runs"
    elif args and os.environ.get("CDPATH") and not args[0].startswith(("/", "./", "../", "~")) and args[0] != "..":
        # bash looks a bare name up in CDPATH first (the commands inherit this process's environment).
        cwd.unsure = f"it runs after `{text}`, and CDPATH is set, so that name may be a directory elsewhere"
    elif not and_chain:
        cwd.unsure = cwd.unsure or f"it runs after `{text}` without `&&`, so the directory change may not have happened"


_ASSIGNED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def _literal_assignments(assignments: Sequence[str]) -> dict[str, str]:
    return {name: value for name, eq, value in (a.partition("=") for a in assignments) if eq and "$" not in value}


def _with_assigned_values(words: Sequence[str], assigned: dict[str, str]) -> list[str]:
    if not assigned:
        return []
    return [_ASSIGNED.sub(lambda m: assigned.get(m.group(1), m.group(0)), w) for w in words if "$" in w]


def _recursive(program: str, argv: Sequence[str]) -> bool:
    if program in RECURSIVE_READERS:
        return True
    flags = [w for w in argv[1:] if w.startswith("-")]
    recursive_flag = any(w in ("--recursive", "-R") or (not w.startswith("--") and "r" in w[1:]) for w in flags)
    return (program in RECURSIVE_WITH_FLAG and recursive_flag) or argv[:2] == ("git", "grep")


def _literal_substitutions(command: str, commands: Sequence[ShellCommand]) -> bool:
    """Every substitution is `$(cat <<'EOF' … EOF)`: it only pastes literal text (a commit message, say).

    Needs the classifier to say which commands run inside a substitution, and every here-document delimiter
    to be quoted (an unquoted one would expand `$(…)` inside the text)."""
    inner = [c for c in commands if getattr(c, "in_substitution", None)]
    if not inner or any(getattr(c, "in_substitution", None) is None for c in commands):
        return False
    for cmd in inner:
        ops = [r.op for r in cmd.redirects]
        if tuple(cmd.argv) != ("cat",) or not ops or any(op not in ("<<", "<<-") for op in ops):
            return False
    return all(m.group(1) in ("'", '"', "\\") for m in _HEREDOC.finditer(command))


def _locate(raw: str, state: _Cwd, home: Path) -> tuple[list[Path], list[GlobWrite], str | None]:
    """Where a path word points: exact paths, or glob patterns below a resolved base, or why it cannot be known."""
    if _GLOB.search(raw) and not _EXPANSION.search(raw):  # (a pattern inside `$(ls '*.py')` is not a glob)
        base, tail = _glob_base(raw)
        found = _resolve(base, state, home)
        if isinstance(found, str):
            return [], [], f"{raw} ({found})"
        return [], [GlobWrite(raw, p, tail) for p in found], None
    found = _resolve(raw, state, home)
    if isinstance(found, str):
        return [], [], f"{raw} ({found})"
    return list(found), [], None


def _shell_words(raws: Sequence[str]) -> tuple[list[str], list[str]]:
    """The words bash makes of each path word by brace expansion (issue 13 §6: `src/{a,../../x}` names two
    paths), plus the word as written (it may have been quoted); and the words that expand to too many."""
    words: list[str] = []
    too_many: list[str] = []
    for raw in dict.fromkeys(raws):
        expanded = expand_braces(raw) if "{" in raw else [raw]
        if expanded is None:
            too_many.append(f"{raw} (brace expansion makes more words than this checker follows)")
            continue
        words.extend(w for w in (raw, *expanded) if w not in words)
    return words, too_many


def _place(
    part: CommandPart, raw_reads: Sequence[str], raw_writes: Sequence[str], state: _Cwd, home: Path, recursive: bool
) -> None:
    reads, too_many_reads = _shell_words(raw_reads)
    writes, too_many_writes = _shell_words(raw_writes)
    part.unresolved_reads.extend(too_many_reads)
    part.unresolved_writes.extend(too_many_writes)
    if too_many_reads or too_many_writes:
        part.read_only = False  # an unknown path: nobody can say it stays inside the working directories
        part.classifier_reason = f"it names {(too_many_reads or too_many_writes)[0]}"
    for raw in reads:
        if _harmless(raw):
            continue
        paths, globs, unresolved = _locate(raw, state, home)
        if unresolved is not None:
            part.unresolved_reads.append(unresolved)
            continue
        # A glob read reads its base directory too (its listing): that is path-checked like any read.
        part.reads.extend(p for p in [*paths, *(g.base for g in globs)] if p not in part.reads)
        part.glob_reads.extend(globs)
        if recursive:
            part.tree_reads.extend(p for p in paths if _is_dir(p, state))
    for raw in writes:
        if _harmless(raw):
            continue
        paths, globs, unresolved = _locate(raw, state, home)
        if unresolved is not None:
            part.unresolved_writes.append(unresolved)
            continue
        part.writes.extend(p for p in paths if p not in part.writes)
        part.glob_writes.extend(globs)


def _place_arguments(part: CommandPart, words: Sequence[str], state: _Cwd, home: Path) -> None:
    expanded, too_many = _shell_words(list(words[1:]))
    part.dynamic_args = part.dynamic_args or bool(too_many)
    for word in expanded:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if not value or value.startswith("-") or _EXPANSION.search(value) or "\n" in value:
            continue
        found = _resolve(_glob_base(value)[0] if _GLOB.search(value) else value, state, home)
        if isinstance(found, str):
            continue
        for path in found:
            if path not in part.arg_paths:
                part.arg_paths.append(path)
            if _is_dir(path, state) and path not in part.tree_reads:
                part.tree_reads.append(path)


def analyze(
    command: str, classification: ShellClassification, cwd: Path, home: Path, classifier: Classifier | None = None
) -> BashFacts:
    opaque: str | None = None
    if classification.raw_check_failures:
        opaque = "; ".join(classification.raw_check_failures)
    elif not classification.parsed:
        opaque = classification.reason or "it could not be parsed"
    commands = list(classification.commands)
    literal = classification.has_substitution and _literal_substitutions(command, commands)
    substituted = classification.has_substitution and not literal
    operators = tuple(classification.operators)
    and_chain = not classification.has_substitution and len(operators) == len(commands) - 1
    and_chain = and_chain and all(op == "&&" for op in operators)

    def scripts(text: str) -> list[tuple[str, ...]]:
        return [tuple(c.argv) for c in classifier(text).commands] if classifier is not None else []

    state = _Cwd(cwd)
    assigned: dict[str, str] = {}
    parts: list[CommandPart] = []
    dotglob = moved = False
    for cmd in commands:
        argv, effective = tuple(cmd.argv), tuple(cmd.effective_argv) or tuple(cmd.argv)
        allow = allow_forms(argv, tuple(cmd.effective_argv), cmd.assignments)
        program = program_name(effective)
        dotglob = dotglob or program in ("shopt", "set", "setopt")
        write_redirect = any(r.writes and not _harmless(r.target) for r in cmd.redirects)
        part = CommandPart(
            text=cmd.text,
            argv=argv,
            program=program,
            deny_forms=deny_forms(argv, tuple(cmd.effective_argv), scripts),
            allow_forms=allow,
            words_ok=not substituted and not write_redirect,
            # Read-only only when the words that run are the ones judged: no unsafe assignment, and no wrapper
            # (sudo, env, xargs, ...) other than the harmless ones between them and the command line.
            read_only=bool(cmd.read_only) and effective in allow,
            classifier_reason=cmd.reason,
            dynamic_program=bool(argv) and any(ch in argv[0] or ch in effective[0] for ch in "$`"),
        )
        if write_redirect and not cmd.read_only and classifier is not None and not substituted and allow:
            # Would it be read-only without its redirections? (acceptEdits allows `echo x > notes.md` in the
            # working directories; the written file is checked like any other write.)
            bare = classifier(shlex.join(argv))
            part.read_only_but_redirects = bool(bare.read_only) and bool(bare.parsed)
        reads, writes = list(cmd.read_targets), list(cmd.write_targets)
        if not moved:
            # Redirection targets, in case the classifier left them out of its lists. After a cd the classifier's
            # lists hold them relative to the new directory, and the raw ones would name the wrong place.
            reads += [r.target for r in cmd.redirects if not r.writes and r.op in ("<", "<>") and r.target]
            writes += [r.target for r in cmd.redirects if r.writes]
        _place(part, reads, writes, state, home, _recursive(program, effective))
        # A word naming a variable this command set to a literal (`f=~/.ssh/id_rsa; cat $f`), with that value put
        # in: the safety checks read it like any path only known when the command runs.
        part.unresolved_reads.extend(w for w in _with_assigned_values(argv[1:], assigned) if w not in argv)
        assigned.update(_literal_assignments(cmd.assignments if not argv else ()))
        part.dynamic_args = any(ch in word for word in argv[1:] for ch in "$`")
        if not cmd.read_only:
            _place_arguments(part, effective, state, home)
        parts.append(part)
        if program in DIRECTORY_CHANGES:
            _after_directory_change(cmd, state, and_chain)
            moved = True

    # Write targets the classifier reports for the whole command but did not attribute to a simple command.
    attributed = {w for c in commands for w in (*c.write_targets, *(r.target for r in c.redirects))}
    orphans = [w for w in classification.write_targets if w not in attributed and not _harmless(w)]
    if orphans:
        opaque = opaque or f"it writes {', '.join(orphans)} from a part of the command that cannot be checked alone"
    command_level = None
    if not classification.read_only and opaque is None and all(c.read_only for c in commands):
        command_level = classification.reason or "the command as a whole is not read-only"

    incomplete = opaque is not None or classification.has_substitution
    crude = crude_forms(command) if incomplete else []
    exposure = environment_exposure(command, [*(f for p in parts for f in p.deny_forms), *crude])
    return BashFacts(
        command=command,
        read_only=bool(classification.read_only)
        and opaque is None
        and exposure is None
        and all(p.read_only for p in parts),
        opaque=opaque,
        parts=parts,
        crude_forms=crude,
        has_substitution=classification.has_substitution,
        dotglob=dotglob,
        command_level=command_level,
        exposure=exposure,
        probed_files=state.probed,
    )


class Analyses:
    """`analyze` with a memory: the facts of the last few commands whose analysis asked no file anything.

    Those follow from the command's text, the directory it starts in and the home directory alone (the
    classifier is pure), so the same command asked about again in the same place gets the same facts without
    being analysed again (an agent repeats its commands; `git status` is analysed once, not on every call).
    Facts that came partly from the file system are never kept: a path may be a directory at one call and a file
    at the next. Kept facts are shared between calls, so nothing may change them once `analyze` returned.
    """

    def __init__(self, classifier: Classifier, size: int = 256) -> None:
        self.classifier = classifier
        self._size = size
        self._kept: dict[tuple[str, Path, Path], BashFacts] = {}

    def facts(self, command: str, cwd: Path, home: Path) -> BashFacts:
        key = (command, cwd, home)
        kept = self._kept.pop(key, None)
        if kept is None:
            kept = analyze(command, self.classifier(command), cwd, home, self.classifier)
            if kept.probed_files:
                return with_repository_config(kept, cwd)
            if len(self._kept) >= self._size:
                del self._kept[next(iter(self._kept))]  # the least recently used
        self._kept[key] = kept  # (re)inserted last: the most recently used
        return with_repository_config(kept, cwd)


def with_repository_config(facts: BashFacts, cwd: Path) -> BashFacts:
    """The facts, with each read-only git part made not read-only when the repository's own configuration names
    a program for it to run (permissions/repo_config.py). Looked at on every call, after the memory: the
    configuration can change between calls, and kept facts are shared, so a changed copy is returned."""
    if not any(p.program == "git" and p.read_only for p in facts.parts):
        return facts
    parts = list(facts.parts)
    for index, part in enumerate(parts):
        if part.program == "git" and part.read_only:
            configured = configured_program(cwd, network="ls-remote" in part.argv)
            if configured is not None:
                parts[index] = replace(part, read_only=False, classifier_reason=configured)
    if parts == facts.parts:
        return facts
    return replace(facts, parts=parts, read_only=False)
