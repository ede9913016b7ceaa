"""git: which subcommands only look, and which of their options would write a file or run a program.

The global options come first (`git -c x=y log`); most of them can make any subcommand run a program
(configuration names programs: pagers, diff drivers, fsmonitor hooks), so only a short list is accepted.
Unknown subcommands are refused: they may be aliases, and an alias can run anything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Verdict, could_be_option, value_expands

_CONFIG_RUNS_PROGRAMS = "and git configuration can name programs to run (pagers, diff drivers, hooks)"
_ELSEWHERE = (
    "runs git on another directory, whose repository configuration (possibly a planted bare repository) "
    "can name programs to run"
)

GLOBAL_FORBIDDEN: dict[str, str] = {
    "-c": f"git -c sets configuration for this run, {_CONFIG_RUNS_PROGRAMS}",
    "--config-env": f"git --config-env sets configuration from the environment, {_CONFIG_RUNS_PROGRAMS}",
    "--exec-path": "git --exec-path changes where git finds its own programs",
    "-p": "git -p sends the output through a pager program",
    "--paginate": "git --paginate sends the output through a pager program",
    "-C": f"git -C {_ELSEWHERE}",
    "--git-dir": f"git --git-dir {_ELSEWHERE}",
    "--work-tree": f"git --work-tree {_ELSEWHERE}",
    "--bare": f"git --bare {_ELSEWHERE}",
}
# The global options that take a separate value (`git -C dir log`): the classifier refuses them (above) and the
# rule matcher (permissions/command_forms.py) skips them with their value to find the subcommand.
GLOBAL_VALUE_OPTIONS = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)
GLOBAL_FLAGS = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-lazy-fetch",
        "--no-advice",
        "--version",
        "--help",
        "-h",
        "--html-path",
        "--man-path",
        "--info-path",
    }
)

# Options of the viewing subcommands that write a file or run a program, and why.
DIFF_FORBIDDEN: dict[str, str] = {
    "--output": "git --output writes the result to a file",
    "-o": "git -o writes the result to a file",
    "--ext-diff": "git --ext-diff runs an external diff program",
    "--textconv": "git --textconv runs text conversion programs",
    "--show-signature": "git --show-signature runs the gpg program that configuration names",
}
# Real options that happen to be abbreviations of forbidden ones (git accepts unambiguous abbreviations).
_EXACT_OK = frozenset({"--text"})


def _forbidden(token: str, forbidden: dict[str, str]) -> str | None:
    """Why `token` is a forbidden option (matching abbreviations of long options), or None."""
    if token.startswith("--"):
        name = token.partition("=")[0]
        if name in forbidden:
            return forbidden[name]
        if name not in _EXACT_OK and len(name) > 2:
            for option, reason in forbidden.items():
                if option.startswith("--") and option.startswith(name):
                    return reason
        return None
    if token.startswith("-") and len(token) > 1:
        return forbidden.get(token[:2])
    return None


@dataclass(slots=True)
class _Scan:
    problem: str | None = None
    operands: list[Word] = field(default_factory=list)  # before `--`
    options: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)  # files named by options (`blame --contents f`, `grep -f f`)


def _output_file(token: str, following: Word | None) -> str | None:
    """The file a forbidden `--output=f`, `--output f` (or an abbreviation), `-of` or `-o f` writes; None for
    the other forbidden options (they run programs)."""
    name, eq, inline = token.partition("=")
    if name.startswith("--"):
        if len(name) > 2 and "--output".startswith(name) and name not in _EXACT_OK:
            return inline if eq else (following.value if following is not None else None)
        return None
    if token.startswith("-o"):
        return token[2:] or (following.value if following is not None else None)
    return None


@dataclass(frozen=True, slots=True)
class ViewerOptions:
    """What parse-options needs to know to walk one viewing subcommand's words: which options are forbidden,
    which short letters take a value (so `-Sfoo` is -S with "foo", and `-nO` is -n then -O), and which options
    name a file that git reads (a path the permission check must see)."""

    forbidden: dict[str, str]
    short_values: str = ""
    reads: frozenset[str] = frozenset()


def _long_read(name: str, reads: frozenset[str]) -> str | None:
    """The read option `name` spells, exactly or as git's unambiguous abbreviation."""
    if name in reads:
        return name
    matches = [option for option in reads if option.startswith("--") and option.startswith(name) and len(name) > 2]
    return matches[0] if len(matches) == 1 else None


def _signature_format(text: str) -> bool:
    """A format that shows signatures (%G?, %GS, …) makes git run gpg.program, which configuration names."""
    return "%G" in text or "%(signature" in text


def _scan(sub: str, args: Sequence[Word], spec: ViewerOptions) -> _Scan:
    """Check every option before `--` the way git's parse-options reads it; stops at the first problem."""
    out = _Scan()
    forbidden = spec.forbidden
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        following = args[index] if index < len(args) else None
        if word.value == "--" and not word.unknown:
            return out
        if word.unknown or (word.pattern and could_be_option(word)):
            out.problem = (
                f"git {sub}'s argument {word.raw} is expanded when it runs, so it could become an option "
                "that writes a file or runs a program"
            )
            return out
        text = word.value
        if _signature_format(text):
            out.problem = f"git {sub} {text} shows signatures, which runs the gpg program that configuration names"
            return out
        if not text.startswith("-") or text == "-":
            out.operands.append(word)
            continue
        out.options.append(text)
        if text.startswith("--"):
            reason = _forbidden(text, forbidden)
            if reason is not None:
                out.problem = reason
                target = _output_file(text, following)
                out.writes.extend([target] if target else [])
                return out
            name, eq, inline = text.partition("=")
            if _long_read(name, spec.reads) is not None:
                value = inline if eq else (following.value if following is not None else "")
                index += 0 if eq else 1
                out.reads.extend([value] if value else [])
            continue
        for position, letter in enumerate(text[1:], start=2):
            option = "-" + letter
            if option in forbidden:
                out.problem = forbidden[option]
                target = _output_file(text[position - 2 :], following) if letter == "o" else None
                out.writes.extend([target] if target else [])
                return out
            if letter in spec.short_values:
                value = text[position:]
                if not value and following is not None:
                    if following.unknown or following.pattern:  # `git log -n *`, a file named --output=x
                        out.problem = value_expands(f"git {sub}", option, following)
                        return out
                    value = following.value
                    index += 1
                if option in spec.reads and value:
                    out.reads.append(value)
                break
    return out


SubCheck = Callable[[str, Sequence[Word]], Verdict]


def _viewer(
    extra: dict[str, str] | None = None, *, allow_o: bool = False, values: str = "SGLOUMCBlnX", reads: str = "-O"
) -> SubCheck:
    forbidden = dict(DIFF_FORBIDDEN)
    if allow_o:
        del forbidden["-o"]  # here -o is a harmless option (ls-files --others, grep --only-matching)
    forbidden.update(extra or {})
    spec = ViewerOptions(forbidden, values, frozenset(reads.split()))

    def check(sub: str, args: Sequence[Word]) -> Verdict:
        scan = _scan(sub, args, spec)
        if scan.problem is not None:
            return Verdict.no(scan.problem, writes=scan.writes)
        reads = [w.value for w in scan.operands] if "--no-index" in scan.options else []
        return Verdict.ok(f"git {sub} only reads the repository", [*scan.reads, *reads])

    return check


def _listing(
    sub: str,
    args: Sequence[Word],
    *,
    allowed: frozenset[str],
    with_value: frozenset[str],
    optional_value: frozenset[str],
    list_flags: frozenset[str],
) -> Verdict:
    """git branch / git tag: read-only only when listing (any other use creates, deletes or renames)."""
    listing = False
    positional: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.unknown or (word.pattern and could_be_option(word)):
            return Verdict.no(f"git {sub}'s argument {word.raw} is only known when it runs")
        text = word.value
        if not text.startswith("-") or text == "-":
            positional.append(word)
            continue
        name = text.partition("=")[0]
        if text.startswith("-n") and sub == "tag" and text[2:].isdigit():
            name = "-n"
        if name not in allowed:
            return Verdict.no(f"git {sub} {name} changes {'branches' if sub == 'branch' else 'tags'}")
        listing = listing or name in list_flags
        if "=" in text:
            continue
        if (name in with_value and i < len(args)) or (
            name in optional_value and i < len(args) and not args[i].value.startswith("-")
        ):
            i += 1
    if positional and not listing:
        names = " ".join(w.raw for w in positional)
        return Verdict.no(f"git {sub} {names} creates {'a branch' if sub == 'branch' else 'a tag'}")
    return Verdict.ok(f"git {sub} only lists")


_LIST_COMMON = frozenset(
    {
        "-l",
        "--list",
        "-v",
        "-vv",
        "--verbose",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "-i",
        "--ignore-case",
        "--omit-empty",
    }
)


def _branch(sub: str, args: Sequence[Word]) -> Verdict:
    return _listing(
        sub,
        args,
        allowed=_LIST_COMMON | {"-a", "--all", "-r", "--remotes", "--show-current", "--abbrev", "--no-abbrev", "-q"},
        with_value=frozenset({"--points-at", "--sort", "--format"}),
        optional_value=frozenset({"--contains", "--no-contains", "--merged", "--no-merged"}),
        list_flags=frozenset({"-l", "--list"}),
    )


def _tag(sub: str, args: Sequence[Word]) -> Verdict:
    return _listing(
        sub,
        args,
        allowed=_LIST_COMMON | {"-n"},
        with_value=frozenset({"--points-at", "--sort", "--format"}),
        optional_value=frozenset({"--contains", "--no-contains", "--merged", "--no-merged"}),
        list_flags=frozenset({"-l", "--list", "-v", "--verify"}),
    )


_CONFIG_READ = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool"})
_CONFIG_READ |= frozenset({"-l", "--list"})
_CONFIG_HARMLESS = frozenset(
    {
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "--null",
        "-z",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
        "--includes",
        "--no-includes",
        "--fixed-value",
        "--all",
        "--regexp",
    }
)
_CONFIG_VALUED = frozenset({"--file", "-f", "--blob", "--type", "--default", "--value", "--url"})


def _config(sub: str, args: Sequence[Word]) -> Verdict:
    if args and args[0].value in ("get", "list") and not args[0].unknown:
        reading, rest = True, args[1:]
    elif args and args[0].value in ("set", "unset", "rename-section", "remove-section", "edit"):
        return Verdict.no(f"git config {args[0].value} changes configuration")
    else:
        reading, rest = False, args
    positional: list[Word] = []
    reads: list[str] = []
    i = 0
    while i < len(rest):
        word = rest[i]
        i += 1
        if word.unknown or word.pattern:
            # `git config *.txt` ran as `git config notes.txt untracked.txt`, which sets notes.txt (a differential
            # harness finding): a pattern can become a name and a value.
            return Verdict.no(f"git config's argument {word.raw} is only known when it runs")
        text = word.value
        if not text.startswith("-"):
            positional.append(word)
            continue
        name, eq, inline = text.partition("=")
        if eq and name not in _CONFIG_VALUED:
            # `--global=x`: git refuses a value on a flag today, but a word this checker cannot read is unknown.
            return Verdict.no(f"git config {text} gives a value to an option that takes none")
        if name in _CONFIG_READ:
            reading = True
        elif name in _CONFIG_VALUED:
            value = inline if eq else (rest[i].value if i < len(rest) else "")
            if not eq:
                i += 1
            if name in ("--file", "-f"):
                reads.append(value)
        elif name not in _CONFIG_HARMLESS:
            return Verdict.no(f"git config {name} changes configuration (or is an option this checker does not know)")
    if reading or len(positional) <= 1:
        return Verdict.ok("git config only reads configuration", reads)
    return Verdict.no("git config with a name and a value sets configuration")


def _with_subcommands(allowed: dict[str, SubCheck], default: str | None) -> SubCheck:
    """git stash / reflog / remote / worktree: a read-only sub-subcommand, or (default) none at all."""

    def check(sub: str, args: Sequence[Word]) -> Verdict:
        first = next((w for w in args if not w.value.startswith("-")), None)
        if first is not None and first.unknown:
            return Verdict.no(f"git {sub}'s argument {first.raw} is only known when it runs")
        action = first.value if first is not None else default
        if action is None or action not in allowed:
            return Verdict.no(f"git {sub} {action or ''} changes the repository".replace("  ", " "))
        rest = [w for w in args if w is not first]
        return allowed[action](f"{sub} {action}", rest)

    return check


def _remote_plain(sub: str, args: Sequence[Word]) -> Verdict:
    for word in args:
        if word.value not in ("-v", "--verbose", "-n"):
            return Verdict.no(f"git {sub} {word.raw} is not a listing")
    return Verdict.ok(f"git {sub} only lists remotes")


_LS_REMOTE = ViewerOptions(
    {
        "--upload-pack": "git ls-remote --upload-pack runs a program",
        "-u": "git ls-remote -u runs a program",
        **DIFF_FORBIDDEN,
    }
)


def _ls_remote(sub: str, args: Sequence[Word]) -> Verdict:
    scan = _scan(sub, args, _LS_REMOTE)
    if scan.problem is not None:
        return Verdict.no(scan.problem, writes=scan.writes)
    operands = scan.operands
    # No remote name starts with "." (git refuses such names), so `.` and `..` are paths: git ls-remote . ran
    # `sh -c "git-upload-pack '.'"` (a differential harness finding).
    name = operands[0].value if operands else ""
    if operands and (name.startswith(".") or not all(ch.isalnum() or ch in "._-" for ch in name)):
        return Verdict.no(
            f"git ls-remote {operands[0].raw} names a repository by URL or path; only a configured remote name "
            "is known to be safe"
        )
    return Verdict.ok("git ls-remote only lists references")


_VIEW = _viewer()
_BLAME = _viewer(values="LSCM", reads="--contents -S --ignore-revs-file")
SUBCOMMANDS: dict[str, SubCheck] = {
    "log": _VIEW,
    "show": _VIEW,
    "diff": _VIEW,
    "whatchanged": _VIEW,
    # shortlog's own -n is --numbered, a flag: the next word is an argument, not a count as in `git log -n 5`.
    "shortlog": _viewer(values="SGLOUMCBlX"),
    "diff-tree": _VIEW,
    "diff-files": _VIEW,
    "diff-index": _VIEW,
    "range-diff": _VIEW,
    "status": _VIEW,
    "blame": _BLAME,
    "annotate": _BLAME,
    "rev-parse": _VIEW,
    "rev-list": _VIEW,
    "describe": _VIEW,
    "merge-base": _VIEW,
    "name-rev": _VIEW,
    "show-ref": _VIEW,
    "for-each-ref": _VIEW,
    "count-objects": _VIEW,
    "ls-tree": _VIEW,
    "check-ignore": _VIEW,
    "check-attr": _VIEW,
    "show-branch": _VIEW,
    "cherry": _VIEW,
    "var": _VIEW,
    "version": _VIEW,
    "ls-files": _viewer(allow_o=True, values="xX", reads="-X --exclude-from"),
    "grep": _viewer(
        {
            "-O": "git grep -O opens the matches in a pager or editor program",
            "--open-files-in-pager": "git grep --open-files-in-pager runs a pager or editor program",
        },
        allow_o=True,
        values="efABCm",
        reads="-f --file",
    ),
    "cat-file": _viewer({"--filters": "git cat-file --filters runs the repository's filter programs"}),
    "branch": _branch,
    "tag": _tag,
    "config": _config,
    "stash": _with_subcommands({"list": _VIEW, "show": _VIEW}, None),
    "reflog": _with_subcommands({"show": _VIEW, "exists": _VIEW}, "show"),
    "worktree": _with_subcommands({"list": _VIEW}, None),
    "ls-remote": _ls_remote,
    # `git remote` with no action (or only -v) lists.
    "remote": _with_subcommands({"show": _VIEW, "get-url": _VIEW, "list": _remote_plain}, "list"),
}


def check_git(name: str, args: Sequence[Word]) -> Verdict:
    i = 0
    while i < len(args):
        word = args[i]
        if word.unknown or word.pattern:
            return Verdict.no(f"git's argument {word.raw} is only known when it runs")
        text = word.value
        if not text.startswith("-"):
            break
        option = text.partition("=")[0]
        if option.startswith("-c") and option != "-c":
            option = "-c"  # -cname=value
        if option in GLOBAL_FORBIDDEN:
            return Verdict.no(GLOBAL_FORBIDDEN[option])
        if option in ("--namespace", "--list-cmds", "--super-prefix", "--attr-source"):
            i += 1 if "=" in text else 2
            continue
        if text not in GLOBAL_FLAGS:
            return Verdict.no(f"git {text} is an option this checker does not know to be safe")
        i += 1
    if i >= len(args):
        return Verdict.ok("git with no subcommand only prints help or its version")
    sub = args[i].value
    check = SUBCOMMANDS.get(sub)
    if check is None:
        return Verdict.no(
            f"git {sub} is not a read-only git subcommand (it changes the repository, talks to a remote, or may "
            "be an alias)"
        )
    return check(sub, args[i + 1 :])
