"""jq and awk: small languages whose programs are read-only unless they read the environment or other files
(jq) or run commands and write files (awk). The program text is inspected, with its string literals set aside
so that `print "a > b"` is not mistaken for a redirection.
"""

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

# --- jq ---------------------------------------------------------------------------------------------

_JQ_FLAGS = names(
    "-n -r -j -a -c -s -e -S -C -M -R -h -V --tab --seq --stream --stream-errors --raw-output --raw-output0 "
    "--raw-input --slurp --null-input --compact-output --join-output --ascii-output --sort-keys --color-output "
    "--monochrome-output --exit-status --unbuffered --help --version --build-configuration"
)
_JQ_SHORT_FLAGS = "nrjacseSCMRhV"
_JQ_FORBIDDEN: dict[str, str] = {
    "-f": "jq -f reads its program from a file this checker cannot see",
    "--from-file": "jq --from-file reads its program from a file this checker cannot see",
    "--rawfile": "jq --rawfile reads a file into a variable",
    "--slurpfile": "jq --slurpfile reads a file into a variable",
    "-L": "jq -L loads modules from a directory",
    "--library-path": "jq --library-path loads modules from a directory",
    "--run-tests": "jq --run-tests runs a test file",
}
JQ_ENVIRONMENT = re.compile(r"\$ENV\b|(?<![\w$])env\b|\$__prog_name|\bget_search_list\b")
_JQ_MODULES = re.compile(r"(?<![\w$])(?:import|include|modulemeta)\b")


def check_jq(name: str, args: Sequence[Word]) -> Verdict:
    operands: list[Word] = []
    filter_word: Word | None = None
    positional_are_values = False
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        text = word.value
        if (positional_are_values and filter_word is not None) or not could_be_option(word) or text == "-":
            if filter_word is None:
                filter_word = word
            elif not positional_are_values:
                operands.append(word)
            continue
        if word.unknown or word.pattern:
            return Verdict.no(f"jq's argument {word.raw} is expanded when it runs, so it could become an option")
        option = text.partition("=")[0]
        if option in _JQ_FORBIDDEN:
            return Verdict.no(_JQ_FORBIDDEN[option])
        if option in ("--args", "--jsonargs"):
            positional_are_values = True  # later operands (after the program) are values, not files
            continue
        if option in ("--arg", "--argjson"):
            i += 2
            continue
        if option == "--indent":
            i += 1
            continue
        if option in _JQ_FLAGS:
            continue
        if not text.startswith("--") and all(ch in _JQ_SHORT_FLAGS for ch in text[1:]):
            continue
        if not text.startswith("--") and "f" in text[1:]:
            return Verdict.no(_JQ_FORBIDDEN["-f"])
        if not text.startswith("--") and "L" in text[1:]:
            return Verdict.no(_JQ_FORBIDDEN["-L"])
        return Verdict.no(f"jq {option} is an option this checker does not know")
    if filter_word is not None:
        if filter_word.unknown:
            return Verdict.no(f"jq's program {filter_word.raw} is only known when it runs")
        # Strings are not set aside: "\(env.X)" interpolates code inside a string literal.
        program = filter_word.value
        if JQ_ENVIRONMENT.search(program):
            return Verdict.no("jq's program reads environment variables (env / $ENV), which hold secrets")
        if _JQ_MODULES.search(program):
            return Verdict.no("jq's program loads modules from files")
    unknown = unknown_paths_verdict(name, operands)
    if unknown is not None:
        return unknown
    return Verdict.ok("jq only transforms JSON", path_values(operands))


# --- awk --------------------------------------------------------------------------------------------

_AWK_FORBIDDEN: dict[str, str] = {
    "-f": "awk -f reads its program from a file this checker cannot see",
    "--file": "awk --file reads its program from a file this checker cannot see",
    "-E": "awk -E reads its program from a file this checker cannot see",
    "--exec": "awk --exec reads its program from a file this checker cannot see",
    "-i": "awk -i loads a program file",
    "--include": "awk --include loads a program file",
    "-l": "awk -l loads an extension library",
    "--load": "awk --load loads an extension library",
    "-d": "awk -d writes its variables to a file",
    "--dump-variables": "awk --dump-variables writes its variables to a file",
    "-p": "awk -p writes a profile to a file",
    "--profile": "awk --profile writes a profile to a file",
    "-o": "awk -o writes the program to a file",
    "--pretty-print": "awk --pretty-print writes the program to a file",
    "-D": "awk -D starts the debugger",
    "--debug": "awk --debug starts the debugger",
    "-W": "awk -W sets implementation options this checker does not model",
}
# gawk reads its options with getopt_long (abbreviations accepted); awk stops reading options at the program.
_AWK_OPTIONS = Options(
    short_values="Fve",
    long_values=names("--field-separator --assign --source"),
    long_flags=names(
        "--characters-as-bytes --traditional --posix --re-interval --sandbox --no-optimize --optimize "
        "--non-decimal-data --use-lc-numeric --lint --gen-pot --copyright --help --version"
    ),
    forbidden=_AWK_FORBIDDEN,
    strict=True,
    known_short="bcPrSsnNtOLg",
    permute=False,
)
_SAFE_OUTPUTS = {"/dev/stdout", "/dev/stderr"}


def _awk_tokens(program: str) -> tuple[str, list[str]]:
    """The program with string and regex literals replaced by placeholders ("S0", /R/), and the strings."""
    out: list[str] = []
    strings: list[str] = []
    i, n = 0, len(program)
    last = ""  # the last significant character emitted, to tell a regex from a division
    while i < n:
        ch = program[i]
        if ch == "#":
            end = program.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == '"':
            j = i + 1
            while j < n and program[j] != '"':
                j += 2 if program[j] == "\\" else 1
            strings.append(program[i + 1 : j])
            out.append(f'"S{len(strings) - 1}"')
            i = j + 1
            last = '"'
            continue
        # A regex literal can only start where an expression starts; after anything else, / divides. (Reading
        # a division as a regex could hide code, so the list is short: the cost of doubt is "not read-only".)
        if ch == "/" and (last == "" or last in "(,;{}!~&|\n"):
            j = i + 1
            while j < n and program[j] not in "/\n":
                j += 2 if program[j] == "\\" else 1
            out.append("/R/")
            i = j + 1
            last = "/"
            continue
        out.append(ch)
        if not ch.isspace():
            last = ch
        i += 1
    return "".join(out), strings


def awk_program_problem(program: str) -> str | None:
    text, strings = _awk_tokens(program)
    if re.search(r"\bsystem\s*\(", text):
        return "awk's program calls system(), which runs shell commands"
    if re.search(r"\bgetline\b", text):
        return "awk's program uses getline, which can read other files or the output of commands"
    if re.search(r"\bARG[VC]\b", text):
        return "awk's program uses ARGV or ARGC, through which it can choose other files to read"
    if re.search(r"@(?:load|include|namespace)\b", text):
        return "awk's program loads other files"
    if "@" in text:
        return "awk's program makes an indirect function call (@name), which can call system()"
    if re.search(r"(?<!\|)\|(?!\|)", text):
        return "awk's program pipes to or from a command"
    for match in re.finditer(r"\b(?:print|printf)\b", text):
        depth = 0
        k = match.end()
        while k < len(text) and text[k] not in ";\n}":
            ch = text[k]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == ">" and depth <= 0:
                rest = text[k:].lstrip(">").lstrip()
                target = re.match(r'"S(\d+)"\s*(?=$|[;\n}])', rest)  # the string alone: "a" "b" concatenates
                if target and strings[int(target.group(1))] in _SAFE_OUTPUTS:
                    break
                return "awk's program redirects print output to a file"
            k += 1
    return None


def check_awk(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _AWK_OPTIONS)
    if parsed.problem is not None:
        return parsed.refusal()
    programs = [value for option, value in parsed.options if option in ("-e", "--source") and value is not None]
    operands = parsed.operands
    if not programs and operands:
        programs, operands = [operands[0]], operands[1:]
    for program in programs:
        if program.unknown:
            return Verdict.no(f"awk's program {program.raw} is only known when it runs")
        problem = awk_program_problem(program.value)
        if problem is not None:
            return Verdict.no(problem)
    files = [w for w in operands if "=" not in w.value or w.value.startswith(("/", "."))]
    unknown = unknown_paths_verdict(name, files)
    if unknown is not None:
        return unknown
    return Verdict.ok(
        "awk's program only prints (no system(), pipes, getline or output redirection)", path_values(files)
    )
