"""The common read-only utilities: what each reads, and the few options that would make one write.

Every utility lists the options it accepts (utility_table.py); an option it does not list makes the command
not read-only, with the reason naming it. The table also says which options take a value, so that
`head -n 5 notes.txt` reads `notes.txt` and not `5`, and which name files the program reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Checker, Verdict, names, path_values, read_options, unknown_paths_verdict
from toolgate.bash.programs.utility_table import TAKES_NO_OPTIONS, UTILITIES, options

__all__ = ["CHECKERS", "TAKES_NO_OPTIONS", "UTILITIES", "VERSION_ONLY"]


def check_utility(name: str, args: Sequence[Word]) -> Verdict:
    spec = UTILITIES[name]
    parsed = read_options(name, args, spec.options)
    if parsed.problem is not None:
        return parsed.refusal()
    reads = list(parsed.reads)
    operands = parsed.operands
    if spec.operands == "pattern+paths":
        if not parsed.has("-e", "--regexp", "-f", "--file") and operands:
            operands = operands[1:]
        if not operands and parsed.has("-r", "-R", "--recursive", "--dereference-recursive"):
            reads.append(".")
    if spec.operands != "values":
        unknown = unknown_paths_verdict(name, operands)
        if unknown is not None:
            return unknown
        reads.extend(path_values(operands))
    return Verdict.ok(f"{name} {spec.what}", reads)


# --- utilities whose operands or options need more than the table ------------------------------------


def check_date(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(
        name,
        args,
        options(
            "dfrI",
            "--date --file --reference --iso-8601 --rfc-3339 --resolution",
            reads="-f --file -r --reference",
            forbidden={"-s": "date -s sets the system clock", "--set": "date --set sets the system clock"},
            known="uR",
            flags="--utc --universal --rfc-email --debug",
        ),
    )
    if parsed.problem is not None:
        return parsed.refusal()
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


_HOSTNAME = options(
    known="adfiIsyAV",
    flags="--alias --all-fqdns --domain --fqdn --long --ip-address --all-ip-addresses --short --yp --nis",
    forbidden={
        "-F": "hostname -F sets the host name from a file",
        "--file": "hostname --file sets the host name from a file",
        "-b": "hostname -b sets the host name",
        "--boot": "hostname --boot sets the host name",
    },
)


def check_hostname(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _HOSTNAME)
    if parsed.problem is not None:
        return parsed.refusal()
    if parsed.operands:
        return Verdict.no(f"hostname {parsed.operands[0].raw} sets the host name")
    return Verdict.ok("hostname only prints the host name")


def check_uniq(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(
        name,
        args,
        options(
            "fsw",
            "--skip-fields --skip-chars --check-chars",
            known="cdDiuz",
            flags="--count --repeated --all-repeated --ignore-case --unique --zero-terminated --group",
        ),
    )
    if parsed.problem is not None:
        return parsed.refusal()
    return _input_and_output(name, parsed.operands)


def check_xxd(name: str, args: Sequence[Word]) -> Verdict:
    # xxd spells some options as one-dash words (-ps, -plain); they all mean -p.
    args = [
        replace(w, value="-p") if w.value in ("-ps", "-postscript", "-plain") and not w.unknown else w for w in args
    ]
    # xxd reads options only before its first operand: `xxd in -nE` writes to a file named -nE (differential
    # harness finding).
    parsed = read_options(name, _xxd_words(args), replace(options(_XXD_VALUES, "", known=_XXD_FLAGS), permute=False))
    if parsed.problem is not None:
        return parsed.refusal()
    return _input_and_output(name, parsed.operands)


_XXD_FLAGS = "abCdEeihpruR"
_XXD_VALUES = "cglosn"


def _xxd_words(args: Sequence[Word]) -> list[Word]:
    """xxd knows no bundles: it reads a word by its first letter, so `-Ec` is -E and nothing more (read as -E -c, it
    took the next word for -c's value and missed that the one after it is the output file: a differential finding).
    Each flag word before the first operand is cut to its letter."""
    words = list(args)
    index = 0
    while index < len(words):
        word = words[index]
        if word.unknown or word.pattern or not word.value.startswith("-") or word.value == "-":
            break  # the first operand (or a word only known when it runs, which read_options refuses)
        if len(word.value) > 2 and word.value[1] in _XXD_FLAGS:
            words[index] = replace(word, value=word.value[:2])
        # `-c 8`: the value is the next word (read_options reads it so too), not the first operand.
        index += 2 if word.value[1:] in tuple(_XXD_VALUES) else 1
    return words


def _input_and_output(name: str, operands: Sequence[Word]) -> Verdict:
    """uniq and xxd take [INPUT [OUTPUT]]: read-only only with one operand that stays one word."""
    if len(operands) > 1:
        return Verdict.no(f"{name} writes its output to {operands[1].raw}", writes=[operands[1].value])
    if operands and operands[0].pattern:
        # `uniq -c .*` ran as `uniq -c .git .gitignore` and overwrote .gitignore (a differential harness finding).
        return Verdict.no(
            f"{name}'s {operands[0].raw} is a pattern that can expand to two files, and {name} writes to the second"
        )
    unknown = unknown_paths_verdict(name, operands)
    return unknown if unknown is not None else Verdict.ok(f"{name} only reads", path_values(operands))


_PS_LETTERS = frozenset("aAcdfFhHjlLmMNrsSTuvwxXyZ")  # no "e": BSD e prints the environment
_PS_VALUED = names(
    "-o -O -p -q -u -U -g -G -t -C -s -k --format --pid --ppid --user --User --group --Group --tty --sort --cols "
    "--columns --rows --width --sid --quick-pid"
)
_PS_FLAGS = names("--forest --headers --no-headers --deselect --help --version --cumulative")


def check_ps(name: str, args: Sequence[Word]) -> Verdict:
    skip = False
    for word in args:
        if word.unknown:
            return Verdict.no(f"ps's argument {word.raw} is only known when it runs")
        text = word.value
        if skip:
            skip = False
            continue
        if text.partition("=")[0] in _PS_VALUED or text in _PS_VALUED:
            skip = "=" not in text
            continue
        if text in _PS_FLAGS or text.isdigit():
            continue
        letters = text.lstrip("-")
        if not text.startswith("-") and "e" in letters and letters.isalpha():
            return Verdict.no("ps with the BSD `e` option prints other processes' environment, which holds secrets")
        if (
            letters.isalpha()
            and not text.startswith("--")
            and all(c in _PS_LETTERS or (c == "e" and text.startswith("-")) for c in letters)
        ):
            continue
        return Verdict.no(f"ps {text} is an option this checker does not know to be safe")
    return Verdict.ok("ps only lists processes")


_LSOF_LETTERS = frozenset("abClhHlnNPRtUVwxXKQ")
_LSOF_VALUED = frozenset({"-c", "-d", "-p", "-u", "-F", "-k", "-S", "+D", "+d", "-D", "+c"})  # a separate value
_LSOF_ATTACHED = ("-i", "-g", "-s", "-T", "-L", "+L", "-o", "-E", "+E", "-r", "+r")  # optional, attached value


def check_lsof(name: str, args: Sequence[Word]) -> Verdict:
    k = 0
    while k < len(args):
        word = args[k]
        text = word.value
        k += 1
        if word.unknown or text.startswith("+m"):
            return Verdict.no("lsof +m writes a mount supplement file")
        if not text.startswith(("-", "+")) or text.startswith(_LSOF_ATTACHED):
            continue  # a file to report on, or an option with its value attached
        if text in _LSOF_VALUED:
            k += 1
        elif text[:2] in _LSOF_VALUED or (text.startswith("-") and all(c in _LSOF_LETTERS for c in text[1:])):
            continue
        else:
            return Verdict.no(f"lsof {text} is an option this checker does not know to be safe")
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
