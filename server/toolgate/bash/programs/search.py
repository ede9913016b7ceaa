"""find, rg and fd: searching is read-only, unless an action deletes, writes a file or runs a program."""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import (
    Options,
    Verdict,
    could_be_option,
    names,
    path_values,
    read_options,
    unknown_paths_verdict,
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
# The primaries find accepts here (issue 13 §5: anything else is not read-only, named in the reason), and
# those that take a value (which may itself start with "-": `-mtime -1`).
_FIND_VALUED = names(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -regextype -type -xtype -size -mtime -mmin "
    "-atime -amin -ctime -cmin -newer -anewer -cnewer -user -group -uid -gid -perm -links -inum -samefile -lname "
    "-ilname -maxdepth -mindepth -used -fstype -context -printf -files0-from"
)
_FIND_FLAGS = names(
    "-empty -nouser -nogroup -readable -writable -executable -true -false -depth -prune -quit -print -print0 -ls "
    "-xdev -mount -follow -noleaf -ignore_readdir_race -noignore_readdir_race -daystart -a -and -o -or -not -warn "
    "-nowarn -help -version"
)
_FIND_NEWER_XY = re.compile(r"-newer[aBcmt][aBcmt]")
_FIND_FILE_VALUED = frozenset({"-files0-from", "-newer", "-anewer", "-cnewer", "-samefile"})


def _find_expression(args: Sequence[Word]) -> str | list[str]:
    """Why find's expression is not known to be read-only, or the files it reads (-files0-from)."""
    reads: list[str] = []
    k = 0
    while k < len(args):
        text = args[k].value
        k += 1
        if not text.startswith("-") or text in ("-", "--"):
            continue
        if text in FIND_ACTIONS:
            continue  # reported by the caller
        if text in _FIND_VALUED or _FIND_NEWER_XY.fullmatch(text):
            compares_file = text in _FIND_FILE_VALUED or (text.startswith("-newer") and not text.endswith("t"))
            if compares_file and k < len(args):
                reads.append(args[k].value)  # a file it reads, or whose times or identity it compares with
            k += 1
        elif text not in _FIND_FLAGS:
            return f"find {text} is an option this checker does not know to be safe"
    return reads


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
    unknown = unknown_paths_verdict(name, starts)
    if unknown is not None:
        return unknown
    expression = _find_expression(args[i:])
    if isinstance(expression, str):
        return Verdict.no(expression)
    return Verdict.ok(
        "find only lists files (no -exec, -delete or file-writing actions)",
        [*(path_values(starts) or ["."]), *expression],
    )


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
        "-L": "rg -L follows symbolic links while searching a tree, so it can read files outside the working "
        "directories (without it, rg does not follow them)",
        "--follow": "rg --follow follows symbolic links while searching a tree, so it can read files outside the "
        "working directories (without it, rg does not follow them)",
    },
    abbreviations=False,
    strict=True,
    known_short="abcFHhiIlnNopPqsSuUvVwx0.",
    long_flags=names(
        "--text --byte-offset --count --count-matches --fixed-strings --with-filename --no-filename --ignore-case "
        "--no-ignore --files-with-matches --files-without-match --line-number --no-line-number "
        "--only-matching --pretty --pcre2 --quiet --case-sensitive --smart-case --unrestricted --multiline "
        "--invert-match --version --word-regexp --line-regexp --null --hidden --no-hidden --files --type-list "
        "--heading --no-heading --vimgrep --json --no-json --stats --no-messages --binary --no-binary "
        "--block-buffered --line-buffered --column --no-column --crlf --no-crlf --debug --trace "
        "--glob-case-insensitive --ignore-file-case-insensitive --include-zero --no-config --no-ignore-dot "
        "--no-ignore-exclude --no-ignore-files --no-ignore-global --no-ignore-parent --no-ignore-vcs "
        "--no-require-git --one-file-system --passthru --no-pcre2-unicode --no-unicode --null-data "
        "--multiline-dotall --max-columns-preview --trim --no-trim --sort-files --auto-hybrid-regex --help "
        "--ignore-dot --ignore-vcs --follow --no-follow --invert-match"
    ),
)


def check_rg(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _RG_OPTIONS)
    if parsed.problem is not None:
        return parsed.refusal()
    operands = parsed.operands
    listing = parsed.has("--files", "--type-list")
    if not listing and not parsed.has("-e", "--regexp", "-f", "--file") and operands:
        operands = operands[1:]  # the first operand is the pattern
    unknown = unknown_paths_verdict(name, operands)
    if unknown is not None:
        return unknown
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
    strict=True,
    known_short="HIusigFalLp0q1hV",
    long_flags=names(
        "--hidden --no-hidden --no-ignore --no-ignore-vcs --no-ignore-parent --unrestricted --case-sensitive "
        "--ignore-case --glob --regex --fixed-strings --absolute-path --relative-path --list-details --follow "
        "--full-path --print0 --quiet --show-errors --one-file-system --prune --strip-cwd-prefix "
        "--no-require-git --no-global-ignore-file --help --version"
    ),
)


def check_fd(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _FD_OPTIONS)
    if parsed.problem is not None:
        return parsed.refusal()
    paths = parsed.operands[1:]
    unknown = unknown_paths_verdict(name, paths)
    if unknown is not None:
        return unknown
    return Verdict.ok(f"{name} only lists files", [*parsed.reads, *(path_values(paths) or ["."])])
