"""find, rg and fd: searching is read-only, unless an action deletes, writes a file or runs a program."""

from __future__ import annotations

from collections.abc import Sequence

from toolgate.shell.parse import Word
from toolgate.shell.programs.base import (
    Options,
    Verdict,
    could_be_option,
    names,
    path_values,
    read_options,
    unknown_paths,
)

FIND_ACTIONS: dict[str, str] = {
    "-exec": "find -exec runs a program for each file it finds",
    "-execdir": "find -execdir runs a program for each file it finds",
    "-ok": "find -ok runs a program for each file it finds",
    "-okdir": "find -okdir runs a program for each file it finds",
    "-delete": "find -delete deletes the files it finds",
    "-fprint": "find -fprint writes its results to a file",
    "-fprint0": "find -fprint0 writes its results to a file",
    "-fprintf": "find -fprintf writes its results to a file",
    "-fls": "find -fls writes its results to a file",
}
_FIND_WRITES = ("-fprint", "-fprint0", "-fprintf", "-fls")


def check_find(name: str, args: Sequence[Word]) -> Verdict:
    starts: list[Word] = []
    i = 0
    # Options that come before the starting points: -H -L -P, -D debugopts, -Olevel.
    while i < len(args):
        value = args[i].value
        if value in ("-H", "-L", "-P") or (value.startswith("-O") and value[2:].isdigit()):
            i += 1
        elif value == "-D":
            i += 2
        else:
            break
    while i < len(args):
        word = args[i]
        if word.unknown or (word.pattern and could_be_option(word)):
            return Verdict.no(
                f"find's argument {word.raw} is expanded when it runs, so it could become -delete or -exec"
            )
        if word.value.startswith("-") or word.value in ("(", "!", ")", ","):
            break
        starts.append(word)
        i += 1
    for k in range(i, len(args)):
        word = args[k]
        if word.unknown or (word.pattern and could_be_option(word)):
            return Verdict.no(
                f"find's argument {word.raw} is expanded when it runs, so it could become -delete or -exec"
            )
        if word.value in FIND_ACTIONS:
            target = [args[k + 1].value] if word.value in _FIND_WRITES and k + 1 < len(args) else []
            return Verdict.no(FIND_ACTIONS[word.value], writes=target)
    problem = unknown_paths(name, starts)
    if problem is not None:
        return Verdict.no(problem)
    return Verdict.ok("find only lists files (no -exec, -delete or file-writing actions)", path_values(starts) or ["."])


_RG_OPTIONS = Options(
    short_values="efgtTmABCMjErd",
    long_values=names(
        "--regexp --file --glob --iglob --type --type-not --type-add --type-clear --max-count --after-context "
        "--before-context --context --max-columns --threads --encoding --replace --max-depth --max-filesize "
        "--path-separator --sort --sortr --colors --color --context-separator --field-context-separator "
        "--field-match-separator --ignore-file --dfa-size-limit --regex-size-limit --engine --generate"
    ),
    reads=frozenset({"-f", "--file", "--ignore-file"}),
    forbidden={
        "--pre": "rg --pre runs a program on every file it searches",
        "--search-zip": "rg --search-zip runs decompression programs",
        "-z": "rg -z runs decompression programs",
        "--hostname-bin": "rg --hostname-bin runs a program",
    },
    abbreviations=False,
)


def check_rg(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _RG_OPTIONS)
    if parsed.problem is not None:
        return Verdict.no(parsed.problem)
    operands = parsed.operands
    listing = parsed.has("--files", "--type-list")
    if not listing and not parsed.has("-e", "--regexp", "-f", "--file") and operands:
        operands = operands[1:]  # the first operand is the pattern
    problem = unknown_paths(name, operands)
    if problem is not None:
        return Verdict.no(problem)
    return Verdict.ok(f"{name} only searches", [*parsed.reads, *(path_values(operands) or ["."])])


_FD_OPTIONS = Options(
    short_values="edtESjc",
    long_values=names(
        "--extension --max-depth --min-depth --exact-depth --type --exclude --size --changed-within "
        "--changed-before --threads --color --base-directory --search-path --ignore-file --path-separator "
        "--max-results --owner --format --batch-size"
    ),
    reads=frozenset({"--ignore-file", "--base-directory", "--search-path"}),
    forbidden={
        "-x": "fd -x runs a program for each file it finds",
        "--exec": "fd --exec runs a program for each file it finds",
        "-X": "fd -X runs a program with the files it finds",
        "--exec-batch": "fd --exec-batch runs a program with the files it finds",
    },
    abbreviations=False,
)


def check_fd(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _FD_OPTIONS)
    if parsed.problem is not None:
        return Verdict.no(parsed.problem)
    paths = parsed.operands[1:]
    problem = unknown_paths(name, paths)
    if problem is not None:
        return Verdict.no(problem)
    return Verdict.ok(f"{name} only lists files", [*parsed.reads, *(path_values(paths) or ["."])])
