"""The common read-only utilities: what each reads, and the few options that would make one write.

Most of these cannot write or run anything whatever their options, so unknown options are accepted; the
table still lists the options that take a value, so that `head -n 5 notes.txt` reads `notes.txt` and not `5`.
A utility with a dangerous option lists it under `forbidden`, and then unknown or run-time-expanded
arguments are refused too (they could turn into that option).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from toolgate.shell.parse import Word
from toolgate.shell.programs.base import Checker, Options, Verdict, path_values, read_options, unknown_paths

Operands = Literal["paths", "values", "pattern+paths"]


@dataclass(frozen=True, slots=True)
class Utility:
    options: Options = field(default_factory=Options)
    operands: Operands = "paths"
    what: str = "only reads"  # completes "<name> …" in the verdict's reason


def _o(
    short: str = "",
    long: str = "",
    *,
    forbidden: dict[str, str] | None = None,
    reads: str = "",
    writes: str = "",
    flags: str = "",
) -> Options:
    return Options(
        short_values=short,
        long_values=frozenset(long.split()),
        long_flags=frozenset(flags.split()),
        forbidden=forbidden or {},
        reads=frozenset(reads.split()),
        writes=frozenset(writes.split()),
    )


_LS_LONG = "--ignore --hide --width --tabsize --block-size --time-style --quoting-style --indicator-style --format"
_GREP_LONG = (
    "--regexp --file --max-count --after-context --before-context --context --label --include --exclude "
    "--exclude-from --exclude-dir --binary-files --devices --directories --group-separator"
)
_DIFF_LONG = (
    "--label --ignore-matching-lines --exclude --exclude-from --from-file --to-file --starting-file "
    "--line-format --old-line-format --new-line-format --unchanged-line-format --old-group-format "
    "--new-group-format --changed-group-format --unchanged-group-format --horizon-lines --tabsize --width "
    "--show-function-line --palette --context --unified --ifdef"
)

UTILITIES: dict[str, Utility] = {
    "cat": Utility(),
    "tac": Utility(_o("s", "--separator")),
    "head": Utility(_o("nc", "--lines --bytes")),
    "tail": Utility(_o("ncs", "--lines --bytes --sleep-interval --pid --max-unchanged-stats")),
    "wc": Utility(_o("", "--files0-from", reads="--files0-from")),
    "ls": Utility(_o("IwT", _LS_LONG)),
    "stat": Utility(_o("c", "--format --printf")),
    "du": Utility(
        _o(
            "dBtX",
            "--max-depth --block-size --threshold --exclude --exclude-from --files0-from --time-style",
            reads="-X --exclude-from --files0-from",
        )
    ),
    "df": Utility(_o("Btx", "--block-size --type --exclude-type")),
    "file": Utility(
        _o(
            "mfFeP",
            "--magic-file --files-from --separator --exclude --parameter",
            reads="-m --magic-file -f --files-from",
            forbidden={
                "-C": "file -C compiles a magic file and writes it",
                "--compile": "file --compile writes a file",
            },
        )
    ),
    "realpath": Utility(_o("", "--relative-to --relative-base")),
    "readlink": Utility(),
    "basename": Utility(_o("s", "--suffix"), "values"),
    "dirname": Utility(operands="values"),
    "echo": Utility(operands="values", what="only prints its arguments"),
    "printf": Utility(
        Options(
            forbidden={"-v": "printf -v assigns to a shell variable, which can change how later commands run"},
            permute=False,  # a builtin: only words before the format are options
        ),
        "values",
        "only prints its arguments",
    ),
    "pwd": Utility(operands="values", what="only prints the directory"),
    "true": Utility(operands="values", what="does nothing"),
    "false": Utility(operands="values", what="does nothing"),
    ":": Utility(operands="values", what="does nothing"),
    "sleep": Utility(operands="values", what="only waits"),
    "seq": Utility(_o("fs", "--format --separator"), "values", "only prints numbers"),
    "expr": Utility(operands="values", what="only computes"),
    "test": Utility(operands="values", what="only tests"),
    "[": Utility(operands="values", what="only tests"),
    "whoami": Utility(operands="values", what="only reports"),
    "id": Utility(operands="values", what="only reports"),
    "groups": Utility(operands="values", what="only reports"),
    "uname": Utility(operands="values", what="only reports"),
    "nproc": Utility(operands="values", what="only reports"),
    "uptime": Utility(operands="values", what="only reports"),
    "arch": Utility(operands="values", what="only reports"),
    "tty": Utility(operands="values", what="only reports"),
    "locale": Utility(operands="values", what="only reports"),
    "logname": Utility(operands="values", what="only reports"),
    "getconf": Utility(operands="values", what="only reports"),
    "free": Utility(operands="values", what="only reports"),
    "printenv": Utility(operands="values", what="only prints environment variables"),
    "which": Utility(operands="values", what="only looks up programs"),
    "type": Utility(operands="values", what="only describes commands"),
    "whereis": Utility(operands="values", what="only looks up programs"),
    "pgrep": Utility(
        _o("dgGPsStuUF", "--delimiter --pgroup --group --parent --session --terminal --euid --uid"), "values"
    ),
    "pidof": Utility(operands="values", what="only looks up processes"),
    "cal": Utility(operands="values", what="only prints a calendar"),
    "cut": Utility(_o("bcdf", "--bytes --characters --delimiter --fields --output-delimiter")),
    "paste": Utility(_o("d", "--delimiters")),
    "tr": Utility(operands="values", what="only transforms its input"),
    "nl": Utility(_o("bdfhilnsvw", "--body-numbering --section-delimiter --footer-numbering --header-numbering")),
    "rev": Utility(),
    "fold": Utility(_o("w", "--width")),
    "fmt": Utility(_o("wpg", "--width --prefix --goal")),
    "column": Utility(_o("cstoNRHWEd", "--columns --separator --output-separator --table-columns")),
    "comm": Utility(_o("", "--output-delimiter")),
    "cmp": Utility(_o("in", "--ignore-initial --bytes")),
    "diff": Utility(_o("CDFILSUXx", _DIFF_LONG, reads="-X --exclude-from --from-file --to-file"), what="only compares"),
    "expand": Utility(_o("t", "--tabs")),
    "unexpand": Utility(_o("t", "--tabs")),
    "join": Utility(_o("aejotv12", "")),
    "od": Utility(_o("AjNSstw", "--address-radix --skip-bytes --read-bytes --strings --format --width")),
    "hexdump": Utility(_o("efns", "", reads="-f")),
    "strings": Utility(_o("ntTe", "--bytes --radix --target --encoding")),
    "md5sum": Utility(),
    "sha1sum": Utility(),
    "sha224sum": Utility(),
    "sha256sum": Utility(),
    "sha384sum": Utility(),
    "sha512sum": Utility(),
    "b2sum": Utility(_o("l", "--length")),
    "cksum": Utility(_o("al", "--algorithm --length")),
    "sum": Utility(),
    "base64": Utility(_o("w", "--wrap")),
    "base32": Utility(_o("w", "--wrap")),
    "numfmt": Utility(
        _o("d", "--from --to --format --padding --field --delimiter --suffix --round --header --invalid"), "values"
    ),
    "tsort": Utility(),
    "grep": Utility(_o("efmABCdD", _GREP_LONG, reads="-f --file --exclude-from"), "pattern+paths", "only searches"),
    "egrep": Utility(_o("efmABCdD", _GREP_LONG, reads="-f --file --exclude-from"), "pattern+paths", "only searches"),
    "fgrep": Utility(_o("efmABCdD", _GREP_LONG, reads="-f --file --exclude-from"), "pattern+paths", "only searches"),
    "sort": Utility(
        _o(
            "ktST",
            "--key --field-separator --buffer-size --temporary-directory --parallel --batch-size --files0-from "
            "--random-source --sort",
            reads="--files0-from --random-source",
            writes="-o --output",
            forbidden={
                "-o": "sort -o writes its output to a file",
                "--output": "sort --output writes its output to a file",
                "--compress-program": "sort --compress-program runs another program",
            },
            flags="--check --reverse --numeric-sort --unique",
        )
    ),
    "shuf": Utility(
        _o(
            "ni",
            "--head-count --input-range --random-source",
            reads="--random-source",
            writes="-o --output",
            forbidden={"-o": "shuf -o writes its output to a file", "--output": "shuf --output writes to a file"},
        )
    ),
    "tree": Utility(
        _o(
            "LPIHT",
            "--charset --filelimit --timefmt --sort --fromfile",
            writes="-o",
            forbidden={
                "-o": "tree -o writes its listing to a file",
                "-R": "tree -R writes HTML files into every directory it lists",
            },
        ),
        what="only lists",
    ),
}


def check_utility(name: str, args: Sequence[Word]) -> Verdict:
    spec = UTILITIES[name]
    parsed = read_options(name, args, spec.options)
    if parsed.problem is not None:
        return Verdict.no(parsed.problem, writes=parsed.writes, reads=parsed.reads)
    reads = list(parsed.reads)
    operands = parsed.operands
    if spec.operands == "pattern+paths":
        if not parsed.has("-e", "--regexp", "-f", "--file") and operands:
            operands = operands[1:]
        if not operands and parsed.has("-r", "-R", "--recursive", "--dereference-recursive"):
            reads.append(".")
    if spec.operands != "values":
        problem = unknown_paths(name, operands)
        if problem is not None:
            return Verdict.no(problem)
        reads.extend(path_values(operands))
    return Verdict.ok(f"{name} {spec.what}", reads)


# --- utilities whose operands or options need more than the table ------------------------------------


def check_date(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(
        name,
        args,
        _o(
            "dfrI",
            "--date --file --reference --iso-8601 --rfc-3339 --resolution",
            reads="-f --file -r --reference",
            forbidden={"-s": "date -s sets the system clock", "--set": "date --set sets the system clock"},
        ),
    )
    if parsed.problem is not None:
        return Verdict.no(parsed.problem)
    for operand in parsed.operands:
        if not operand.value.startswith("+"):
            return Verdict.no(f"date {operand.raw} sets the system clock (only +FORMAT arguments just print)")
    return Verdict.ok("date only prints the date", parsed.reads)


def check_test(name: str, args: Sequence[Word]) -> Verdict:
    for index, word in enumerate(args):
        if word.value in ("-v", "-R") and index + 1 < len(args):
            target = args[index + 1]
            if target.unknown or "[" in target.value:
                return Verdict.no(
                    f"{name} {word.value} evaluates an array subscript as arithmetic, which can run commands"
                )
    return Verdict.ok(f"{name} only tests")


def check_hostname(name: str, args: Sequence[Word]) -> Verdict:
    for word in args:
        if word.unknown or not word.value.startswith("-") or word.value in ("-F", "--file", "-b", "--boot"):
            return Verdict.no("hostname with an argument sets the host name")
    return Verdict.ok("hostname only prints the host name")


def check_uniq(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _o("fsw", "--skip-fields --skip-chars --check-chars"))
    if parsed.problem is not None:
        return Verdict.no(parsed.problem)
    operands = parsed.operands
    if len(operands) > 1:
        return Verdict.no(f"uniq writes its output to {operands[1].raw}", writes=[operands[1].value])
    problem = unknown_paths(name, operands)
    return Verdict.no(problem) if problem else Verdict.ok("uniq only reads", path_values(operands))


def check_xxd(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _o("cglos", "", flags=""))
    if parsed.problem is not None:
        return Verdict.no(parsed.problem)
    operands = parsed.operands
    if len(operands) > 1:
        return Verdict.no(f"xxd writes its output to {operands[1].raw}", writes=[operands[1].value])
    problem = unknown_paths(name, operands)
    return Verdict.no(problem) if problem else Verdict.ok("xxd only reads", path_values(operands))


def check_ps(name: str, args: Sequence[Word]) -> Verdict:
    for word in args:
        if word.unknown:
            return Verdict.no(f"ps's argument {word.raw} is only known when it runs")
        if not word.value.startswith("-") and "e" in word.value and word.value.isalpha():
            return Verdict.no("ps with the BSD `e` option prints other processes' environment, which holds secrets")
    return Verdict.ok("ps only lists processes")


def check_lsof(name: str, args: Sequence[Word]) -> Verdict:
    for word in args:
        if word.value.startswith("+m") or word.unknown:
            return Verdict.no("lsof +m writes a mount supplement file")
    return Verdict.ok("lsof only lists open files")


# Toolchains that are safe to ask for their version, and how each spells it.
_VERSION_FLAGS: dict[str, tuple[str, ...]] = {
    "node": ("--version", "-v"),
    "python": ("--version", "-V"),
    "python3": ("--version", "-V"),
    "pip": ("--version", "-V"),
    "pip3": ("--version", "-V"),
    "npm": ("--version", "-v"),
    "npx": ("--version",),
    "yarn": ("--version", "-v"),
    "pnpm": ("--version", "-v"),
    "deno": ("--version", "-V"),
    "bun": ("--version", "-v"),
    "cargo": ("--version", "-V"),
    "rustc": ("--version", "-V"),
    "rustup": ("--version", "-V"),
    "go": ("version",),
    "java": ("-version", "--version"),
    "javac": ("-version", "--version"),
    "gcc": ("--version",),
    "g++": ("--version",),
    "clang": ("--version",),
    "make": ("--version", "-v"),
    "cmake": ("--version",),
    "ruby": ("--version", "-v"),
    "perl": ("--version", "-v"),
    "docker": ("--version", "-v"),
    "tsc": ("--version", "-v"),
    "uv": ("--version", "-V"),
    "poetry": ("--version", "-V"),
    "bash": ("--version",),
    "rg": ("--version", "-V"),
}


def check_version(name: str, args: Sequence[Word]) -> Verdict:
    if len(args) == 1 and not args[0].unknown and args[0].value in _VERSION_FLAGS[name]:
        return Verdict.ok(f"{name} {args[0].value} only prints its version")
    return Verdict.no(f"{name} runs code or changes files; only `{name} {_VERSION_FLAGS[name][0]}` is known to be safe")


CHECKERS: dict[str, Checker] = {
    **{name: check_utility for name in UTILITIES},
    "date": check_date,
    "hostname": check_hostname,
    "test": check_test,
    "[": check_test,
    "uniq": check_uniq,
    "xxd": check_xxd,
    "ps": check_ps,
    "lsof": check_lsof,
}

VERSION_ONLY: dict[str, Checker] = {name: check_version for name in _VERSION_FLAGS if name != "rg"}
