"""The table of common read-only utilities: for each, the options it accepts (issue 13 §5: any other
option makes the command not read-only, with the option named), which of them take a value, which name a
file the program reads, and the few that would make it write (listed under `forbidden`).

Read by `utilities.py`, which checks a command against its entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolgate.bash.programs.base import Options

Operands = Literal["paths", "values", "pattern+paths"]


@dataclass(frozen=True, slots=True)
class Utility:
    options: Options = field(default_factory=Options)
    operands: Operands = "paths"
    what: str = "only reads"  # completes "<name> …" in the verdict's reason


def options(
    short: str = "",
    long: str = "",
    *,
    forbidden: dict[str, str] | None = None,
    reads: str = "",
    writes: str = "",
    flags: str = "",
    known: str = "",
    optional: str = "",
) -> Options:
    """`short`/`long`: options that take a value; `known`/`flags`: short and long options without one;
    `optional`: short options with an optional, attached value. Anything else makes the command not
    read-only (issue 13 §5: an option this table does not list may write a file, as BSD `base64 -o` does)."""
    return Options(
        short_values=short,
        long_values=frozenset(long.split()),
        long_flags=frozenset(flags.split()),
        forbidden=forbidden or {},
        reads=frozenset(reads.split()),
        writes=frozenset(writes.split()),
        strict=True,
        known_short=known,
        optional_values=optional,
    )


_NONE = Options()  # programs that take no options at all: every word is an operand (echo prints `-x`)
_DIGITS = "0123456789"  # `head -20`, `grep -3`: the old spelling of a count
_LS_LONG = "--ignore --hide --width --tabsize --block-size --time-style --quoting-style --indicator-style --format"
_LS_FLAGS = (
    "--all --almost-all --author --escape --ignore-backups --color --colour --directory --dired --classify "
    "--file-type --full-time --group-directories-first --no-group --human-readable --si "
    "--dereference-command-line --dereference-command-line-symlink-to-dir --hyperlink --inode --kibibytes "
    "--dereference --literal --numeric-uid-gid --hide-control-chars --show-control-chars --quote-name --reverse "
    "--recursive --size --sort --time --context --zero"
)
_GREP_LONG = (
    "--regexp --file --max-count --after-context --before-context --context --label --include --exclude "
    "--exclude-from --exclude-dir --binary-files --devices --directories --group-separator"
)
_GREP_FLAGS = (
    "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case --no-ignore-case --word-regexp "
    "--line-regexp --null-data --no-messages --invert-match --byte-offset --line-number --no-line-number "
    "--line-buffered --with-filename --no-filename --only-matching --quiet --silent --recursive "
    "--dereference-recursive --files-without-match --files-with-matches --count --initial-tab --null --text "
    "--color --colour --no-group-separator"
)
# Following symbolic links through a whole tree can read files outside the working directories that no path
# check saw (a link to the home directory); -r follows only the links named on the command line.
_FOLLOWS_LINKS = (
    "follows symbolic links while reading a whole tree, so it can read files outside the working directories"
)
_GREP = options(
    "efmABCdD",
    f"{_GREP_LONG}",
    reads="-f --file --exclude-from",
    known="abcEFGhHiIlLnoPqrsTUvVwxyzZ" + _DIGITS,
    flags=_GREP_FLAGS.replace(" --dereference-recursive", ""),
    forbidden={
        "-R": f"grep -R {_FOLLOWS_LINKS} (grep -r does not)",
        "--dereference-recursive": f"grep --dereference-recursive {_FOLLOWS_LINKS} (grep -r does not)",
    },
)
_DIFF_LONG = (
    "--label --ignore-matching-lines --exclude --exclude-from --from-file --to-file --starting-file "
    "--line-format --old-line-format --new-line-format --unchanged-line-format --old-group-format "
    "--new-group-format --changed-group-format --unchanged-group-format --horizon-lines --tabsize --width "
    "--show-function-line --palette --ifdef"
)
_DIFF_FLAGS = (
    "--normal --brief --report-identical-files --context --unified --ed --rcs --side-by-side --left-column "
    "--suppress-common-lines --show-c-function --new-file --unidirectional-new-file --ignore-case "
    "--ignore-file-name-case --no-ignore-file-name-case --ignore-tab-expansion --ignore-trailing-space "
    "--ignore-space-change --ignore-all-space --ignore-blank-lines --strip-trailing-cr --text --recursive "
    "--expand-tabs --initial-tab --suppress-blank-empty --minimal --speed-large-files --color --no-dereference"
)
_SUMS = options(
    known="bctwz", flags="--binary --check --tag --text --zero --ignore-missing --quiet --status --strict --warn"
)
_REPORT = "only reports"

UTILITIES: dict[str, Utility] = {
    "cat": Utility(
        options(
            known="AbeEnstTuv",
            flags="--show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs --show-nonprinting",
        )
    ),
    "tac": Utility(options("s", "--separator", known="br", flags="--before --regex")),
    "head": Utility(
        options("nc", "--lines --bytes", known="qvz" + _DIGITS, flags="--quiet --silent --verbose --zero-terminated")
    ),
    "tail": Utility(
        options(
            "ncs",
            "--lines --bytes --sleep-interval --pid --max-unchanged-stats",
            known="fFqvz" + _DIGITS,
            flags="--follow --retry --quiet --silent --verbose --zero-terminated",
        )
    ),
    "wc": Utility(
        options(
            "",
            "--files0-from",
            reads="--files0-from",
            known="cmlLw",
            flags="--bytes --chars --lines --max-line-length --words --total",
        )
    ),
    "ls": Utility(options("IwT", _LS_LONG, known="aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1", flags=_LS_FLAGS)),
    "stat": Utility(
        options("c", "--format --printf", known="Lft", flags="--dereference --file-system --terse --cached")
    ),
    "du": Utility(
        options(
            "dBtX",
            "--max-depth --block-size --threshold --exclude --exclude-from --files0-from --time-style",
            reads="-X --exclude-from --files0-from",
            known="0abcDhHklLmPsSx",
            flags="--null --all --apparent-size --bytes --total --dereference-args --human-readable --inodes "
            "--dereference --count-links --no-dereference --separate-dirs --si --summarize --one-file-system --time",
        )
    ),
    "df": Utility(
        options(
            "Btx",
            "--block-size --type --exclude-type",
            known="ahHiklPTv",
            flags="--all --human-readable --si --inodes --local --no-sync --sync --portability "
            "--print-type --total --output",
        )
    ),
    "file": Utility(
        options(
            "mfFeP",
            "--magic-file --files-from --separator --exclude --parameter",
            reads="-m --magic-file -f --files-from",
            forbidden={
                "-C": "file -C compiles a magic file and writes it",
                "--compile": "file --compile writes a file",
                # A differential harness finding: file -p ran utimensat on every file it read.
                "-p": "file -p sets the access times of the files it reads back (it changes them)",
                "--preserve-date": "file --preserve-date sets the access times of the files it reads back",
            },
            known="bcdEhiklLnNrsvzZ0S",
            flags="--brief --checking-printout --extension --no-dereference --dereference --mime --mime-type "
            "--mime-encoding --keep-going --list --no-buffer --no-pad --raw --special-files "
            "--uncompress --uncompress-noreport --print0 --apple --exclude-quiet --no-sandbox",
        )
    ),
    "realpath": Utility(
        options(
            "",
            "--relative-to --relative-base",
            known="emLPqsz",
            flags="--canonicalize-existing --canonicalize-missing --logical --physical --quiet "
            "--strip --no-symlinks --zero",
        )
    ),
    "readlink": Utility(
        options(
            known="femnqsvz",
            flags="--canonicalize --canonicalize-existing --canonicalize-missing "
            "--no-newline --quiet --silent --verbose --zero",
        )
    ),
    "basename": Utility(options("s", "--suffix", known="az", flags="--multiple --zero"), "values"),
    "dirname": Utility(options(known="z", flags="--zero"), "values"),
    "echo": Utility(_NONE, "values", "only prints its arguments"),
    "printf": Utility(
        Options(
            forbidden={"-v": "printf -v assigns to a shell variable, which can change how later commands run"},
            permute=False,  # a builtin: only words before the format are options
        ),
        "values",
        "only prints its arguments",
    ),
    "pwd": Utility(options(known="LP"), "values", "only prints the directory"),
    "true": Utility(_NONE, "values", "does nothing"),
    "false": Utility(_NONE, "values", "does nothing"),
    ":": Utility(_NONE, "values", "does nothing"),
    "sleep": Utility(_NONE, "values", "only waits"),
    "seq": Utility(
        options("fs", "--format --separator", known="w", flags="--equal-width"), "values", "only prints numbers"
    ),
    "expr": Utility(_NONE, "values", "only computes"),
    "test": Utility(_NONE, "values", "only tests"),
    "[": Utility(_NONE, "values", "only tests"),
    "whoami": Utility(options(), "values", _REPORT),
    "id": Utility(
        options(known="aZgGnruz", flags="--context --group --groups --name --real --user --zero"), "values", _REPORT
    ),
    "groups": Utility(options(), "values", _REPORT),
    "uname": Utility(
        options(
            known="asnrvmpio",
            flags="--all --kernel-name --nodename --kernel-release --kernel-version "
            "--machine --processor --hardware-platform --operating-system",
        ),
        "values",
        _REPORT,
    ),
    "nproc": Utility(options("", "--ignore", flags="--all"), "values", _REPORT),
    "uptime": Utility(options(known="ps", flags="--pretty --since"), "values", _REPORT),
    "arch": Utility(options(), "values", _REPORT),
    "tty": Utility(options(known="s", flags="--silent --quiet"), "values", _REPORT),
    "locale": Utility(
        options(
            known="ackv",
            flags="--all-locales --category-name --keyword-name --verbose",
            forbidden={  # found by the differential harness (tests/differential)
                "-m": "locale -m runs gzip to read compressed character maps",
                "--charmaps": "locale --charmaps runs gzip to read compressed character maps",
            },
        ),
        "values",
        _REPORT,
    ),
    "logname": Utility(options(), "values", _REPORT),
    "getconf": Utility(options("v", known="a", flags="--all"), "values", _REPORT),
    "free": Utility(
        options(
            "sc",
            "--seconds --count",
            known="bkmghltwv",
            flags="--bytes --kilo --mega --giga --tera --peta --kibi --mebi --gibi --tebi --pebi --human "
            "--si --lohi --total --wide --committed",
        ),
        "values",
        _REPORT,
    ),
    "printenv": Utility(options(known="0", flags="--null"), "values", "only prints environment variables"),
    "which": Utility(options(known="as"), "values", "only looks up programs"),
    "type": Utility(options(known="afpPt"), "values", "only describes commands"),
    "whereis": Utility(options("BMSf", known="bmsul"), "values", "only looks up programs"),
    "pgrep": Utility(
        options(
            "dgGPsStuUFr",
            "--delimiter --pgroup --group --parent --session --terminal --euid --uid --pidfile "
            "--runstates --ns --nslist --signal",
            known="cfilaAnovwxH",
            flags="--count --full --ignore-case --list-name --list-full --newest --oldest --inverse --lightweight "
            "--exact --logpidfile --ignore-ancestors --require-handler --cgroup --env",
        ),
        "values",
    ),
    "pidof": Utility(options("o", "--omit-pid", known="scnxqwz"), "values", "only looks up processes"),
    "cal": Utility(options(known="13AjmsywhSv"), "values", "only prints a calendar"),
    "cut": Utility(
        options(
            "bcdf",
            "--bytes --characters --delimiter --fields --output-delimiter",
            known="nsz",
            flags="--complement --only-delimited --zero-terminated",
        )
    ),
    "paste": Utility(options("d", "--delimiters", known="sz", flags="--serial --zero-terminated")),
    "tr": Utility(
        options(known="cCdst", flags="--complement --delete --squeeze-repeats --truncate-set1"),
        "values",
        "only transforms its input",
    ),
    "nl": Utility(
        options(
            "bdfhilnsvw",
            "--body-numbering --section-delimiter --footer-numbering --header-numbering "
            "--line-increment --join-blank-lines --number-format --number-separator "
            "--starting-line-number --number-width",
            known="p",
            flags="--no-renumber",
        )
    ),
    "rev": Utility(options(known="0", flags="--zero")),
    "fold": Utility(options("w", "--width", known="bs", flags="--bytes --spaces")),
    "fmt": Utility(
        options(
            "wpg",
            "--width --prefix --goal",
            known="cstu",
            flags="--crown-margin --split-only --tagged-paragraph --uniform-spacing",
        )
    ),
    "column": Utility(
        options(
            "cEHilNnOopRrsTW",
            "--output-width --table-noextreme --table-hide --tree-id "
            "--table-columns-limit --table-columns --table-name --table-order --output-separator "
            "--tree-parent --table-right --tree --separator --table-truncate --table-wrap",
            known="deJLtx",
            flags="--table-noheadings --table-header-repeat --json --keep-empty-lines --table --fillrows",
        )
    ),
    "comm": Utility(
        options("", "--output-delimiter", known="123z", flags="--check-order --nocheck-order --total --zero-terminated")
    ),
    "cmp": Utility(
        options("in", "--ignore-initial --bytes", known="bls", flags="--print-bytes --verbose --quiet --silent")
    ),
    "diff": Utility(
        options(
            "CDFILSUXx",
            _DIFF_LONG,
            reads="-X --exclude-from --from-file --to-file",
            known="abBcdeEfinNpPqrstTuvwyZ" + _DIGITS,
            flags=_DIFF_FLAGS,
            forbidden={  # found by the differential harness (tests/differential)
                "-l": "diff -l runs pr to paginate its output",
                "--paginate": "diff --paginate runs pr to paginate its output",
            },
        ),
        what="only compares",
    ),
    "expand": Utility(options("t", "--tabs", known="i" + _DIGITS, flags="--initial")),
    "unexpand": Utility(options("t", "--tabs", known="a" + _DIGITS, flags="--all --first-only")),
    "join": Utility(
        options(
            "aejotv12", "", known="iz", flags="--ignore-case --check-order --nocheck-order --header --zero-terminated"
        )
    ),
    "od": Utility(
        options(
            "AjNSt",
            "--address-radix --skip-bytes --read-bytes --strings --format --width --endian",
            known="abcdfilosvx",
            optional="w",
            flags="--output-duplicates --traditional",
        )
    ),
    "hexdump": Utility(
        options(
            "efns",
            "--format --length --skip --format-file",
            reads="-f --format-file",
            known="bcCdovx",
            flags="--one-byte-octal --one-byte-char --canonical --two-bytes-decimal "
            "--two-bytes-octal --two-bytes-hex --no-squeezing",
        )
    ),
    "strings": Utility(
        options(
            "ntTes",
            "--bytes --radix --target --encoding --output-separator",
            known="adfow",
            flags="--all --data --print-file-name --include-all-whitespace",
        )
    ),
    "md5sum": Utility(_SUMS),
    "sha1sum": Utility(_SUMS),
    "sha224sum": Utility(_SUMS),
    "sha256sum": Utility(_SUMS),
    "sha384sum": Utility(_SUMS),
    "sha512sum": Utility(_SUMS),
    "b2sum": Utility(
        options(
            "l",
            "--length",
            known="bctwz",
            flags="--binary --check --tag --text --zero --ignore-missing --quiet --status --strict --warn",
        )
    ),
    "cksum": Utility(
        options(
            "al",
            "--algorithm --length",
            known="cz",
            flags="--base64 --raw --tag --untagged --check "
            "--zero --debug --warn --strict --quiet --status --ignore-missing",
        )
    ),
    "sum": Utility(options(known="rs", flags="--sysv")),
    # Not "-o": BSD base64 writes its output to the file named there.
    "base64": Utility(options("w", "--wrap", known="di", flags="--decode --ignore-garbage")),
    "base32": Utility(options("w", "--wrap", known="di", flags="--decode --ignore-garbage")),
    "numfmt": Utility(
        options(
            "d",
            "--from --to --format --padding --field --delimiter --suffix --round --invalid --from-unit --to-unit",
            known="z",
            flags="--zero-terminated --debug --grouping --header",
        ),
        "values",
    ),
    "tsort": Utility(options()),
    "grep": Utility(_GREP, "pattern+paths", "only searches"),
    "egrep": Utility(_GREP, "pattern+paths", "only searches"),
    "fgrep": Utility(_GREP, "pattern+paths", "only searches"),
    "sort": Utility(
        options(
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
            known="bcCdfghiMmnRrsuVz",
            flags="--check --reverse --numeric-sort --unique --ignore-leading-blanks --dictionary-order "
            "--ignore-case --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort "
            "--random-sort --version-sort --merge --stable --zero-terminated --debug",
        )
    ),
    "shuf": Utility(
        options(
            "ni",
            "--head-count --input-range --random-source",
            reads="--random-source",
            writes="-o --output",
            forbidden={"-o": "shuf -o writes its output to a file", "--output": "shuf --output writes to a file"},
            known="erz",
            flags="--echo --repeat --zero-terminated",
        )
    ),
    "tree": Utility(
        options(
            "LPIHT",
            "--charset --filelimit --timefmt --sort --hyperlink --scheme --authority",
            writes="-o",
            forbidden={
                "-o": "tree -o writes its listing to a file",
                "-R": "tree -R writes HTML files into every directory it lists",
                "--fromfile": "tree --fromfile reads a listing from a file named among its arguments",
            },
            known="adlfxqNQpugshDFvtcUriASnCXJ",
            flags="--gitignore --ignore-case --matchdirs --metafirst --prune --info --noreport --dirsfirst "
            "--filesfirst --si --du --inodes --device --nolinks",
        ),
        what="only lists",
    ),
}

# Programs whose words are all operands (they parse no options), so no word can be an unknown option.
TAKES_NO_OPTIONS = frozenset(name for name, utility in UTILITIES.items() if utility.options is _NONE)
