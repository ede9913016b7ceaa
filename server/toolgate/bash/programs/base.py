"""What every program table is built from: a verdict, and a GNU-style option reader that knows about danger.

A program's checker gets the words after its name and answers: read-only or not, why, and which paths it
reads and writes. Most checkers are a few lines on top of `read_options`, which walks the words the way
getopt_long does (bundled short options, attached values, `--name=value`, unambiguous abbreviations of
long options, `--` ending the options) and stops at the first forbidden option.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from toolgate.bash.parse import Word


@dataclass(frozen=True, slots=True)
class Verdict:
    read_only: bool
    reason: str
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    # A command this program runs with extra arguments appended (xargs); the classifier checks it.
    runs: tuple[Word, ...] | None = None
    # The directory a cd/pushd moves to: its value, or None when it is not known until it runs.
    changes_directory: str | None = None
    moves_directory: bool = False

    @classmethod
    def ok(cls, reason: str, reads: Sequence[str] = ()) -> Verdict:
        return cls(True, reason, tuple(reads))

    @classmethod
    def no(cls, reason: str, writes: Sequence[str] = (), reads: Sequence[str] = ()) -> Verdict:
        return cls(False, reason, tuple(reads), tuple(writes))


Checker = Callable[[str, Sequence[Word]], Verdict]


def names(text: str) -> frozenset[str]:
    """A set of option names written as one space-separated string (the tables read better that way)."""
    return frozenset(text.split())


@dataclass(frozen=True, slots=True)
class Options:
    """How one program reads its options, and which of them are dangerous."""

    short_values: str = ""  # short options that take a value (-n 5, -n5)
    long_values: frozenset[str] = frozenset()  # long options that take a value (--lines=5, --lines 5)
    long_flags: frozenset[str] = frozenset()  # long options without a value that we know to be harmless
    forbidden: Mapping[str, str] = field(default_factory=dict)  # "-o" / "--output" → why it is not read-only
    reads: frozenset[str] = frozenset()  # options whose value is a file the program reads
    writes: frozenset[str] = frozenset()  # options whose value is a file the program writes
    abbreviations: bool = True  # getopt_long accepts any unambiguous prefix of a long option
    permute: bool = True  # options may come after operands (GNU); False: the first operand ends them
    strict: bool = False  # unknown options are refused (a table that does not know them all)
    known_short: str = ""  # with strict: the short options that are accepted
    optional_values: str = ""  # short options whose value is optional, so only ever attached (od -w16)
    # Computed once (the classifier reads them for every option of every command).
    _long_names: frozenset[str] = field(init=False, repr=False, compare=False)
    _known: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_long_names", self.long_values | self.long_flags)
        object.__setattr__(self, "_known", frozenset(self.known_short + self.short_values))

    def long_names(self) -> frozenset[str]:
        return self._long_names


@dataclass(slots=True)
class ReadOptions:
    options: list[tuple[str, Word | None]] = field(default_factory=list)  # ("-n", value) / ("--lines", value)
    operands: list[Word] = field(default_factory=list)
    problem: str | None = None
    forbidden_option: str | None = None
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def refusal(self) -> Verdict:
        """The verdict for a command stopped at `problem`, with the files it would have read and written (a
        word only known at run time included as written: the permission side cannot place it)."""
        return Verdict.no(self.problem or "", writes=self.writes, reads=self.reads)

    def value(self, *names: str) -> Word | None:
        for name, value in self.options:
            if name in names:
                return value
        return None


def could_be_option(word: Word) -> bool:
    """May this word turn into one or more options when bash expands it?"""
    if word.value.startswith("-") or word.unknown:
        return True
    # A pattern that starts with a wildcard can match a file whose name starts with "-" (say "-rf").
    return word.pattern and word.value[:1] in "*?[{@+!"


def _forbidden_long(name: str, spec: Options) -> str | None:
    if name in spec.forbidden:
        return name
    if spec.abbreviations and len(name) > 2 and name not in spec.long_names():
        for option in spec.forbidden:
            if option.startswith("--") and option.startswith(name):
                return option
    return None


def read_options(program: str, args: Sequence[Word], spec: Options) -> ReadOptions:
    """Walk `args` as `program` would read them. Stops with `problem` set at the first thing that is not safe."""
    out = ReadOptions()
    i = 0
    only_operands = False
    while i < len(args):
        word = args[i]
        i += 1
        text = word.value
        if only_operands or not could_be_option(word) or text == "-":
            out.operands.append(word)
            if not spec.permute:
                only_operands = True
            continue
        if word.unknown or (word.pattern and not text.startswith("-")):
            # Only where an option would write or run something: a strict table refuses options it does not
            # know when they are written out, but `wc -l *.py` must stay read-only.
            if spec.forbidden:
                out.reads.append(word.raw)
                out.problem = (
                    f"{program}'s argument {word.raw} is expanded when it runs, so it could become an option "
                    "that writes files or runs programs"
                )
                return out
            out.operands.append(word)
            continue
        if text == "--":
            only_operands = True
            continue
        if text.startswith("--"):
            name, eq, inline = text.partition("=")
            hit = _forbidden_long(name, spec)
            if hit is not None:
                out.forbidden_option = hit
                out.problem = spec.forbidden[hit]
                value_word = Word.literal(inline) if eq else (args[i] if i < len(args) else None)
                if value_word is not None and hit in spec.writes:
                    out.writes.append(value_word.value)
                return out
            if spec.strict and name not in spec.long_names() and name not in ("--help", "--version"):
                matches = [o for o in spec.long_names() if o.startswith(name)] if spec.abbreviations else []
                if len(matches) != 1:
                    out.problem = f"{program} {name} is an option this checker does not know to be safe"
                    return out
                name = matches[0]  # getopt_long's unambiguous abbreviation
            value: Word | None = None
            if eq:
                value = Word.literal(inline)
            elif name in spec.long_values and i < len(args):
                value = args[i]
                i += 1
                if _splits_where_it_matters(value, spec):
                    out.problem = value_expands(program, name, value)
                    return out
            _note_files(out, name, value, spec)
            out.options.append((name, value))
            continue
        # A bundle of short options: -abc, -n5, -n 5
        k = 1
        while k < len(text):
            letter = "-" + text[k]
            if letter in spec.forbidden:
                out.forbidden_option = letter
                out.problem = spec.forbidden[letter]
                if letter in spec.writes:
                    target = text[k + 1 :] or (args[i].value if i < len(args) else "")
                    out.writes.extend([target] if target else [])
                return out
            if text[k] in spec.optional_values:
                rest = text[k + 1 :]
                out.options.append((letter, Word.literal(rest) if rest else None))
                break
            if spec.strict and text[k] not in spec._known:
                out.problem = f"{program} {letter} is an option this checker does not know to be safe"
                return out
            if text[k] in spec.short_values:
                rest = text[k + 1 :]
                if rest:
                    value = Word.literal(rest)
                elif i < len(args):
                    value = args[i]
                    i += 1
                    if _splits_where_it_matters(value, spec):
                        out.problem = value_expands(program, letter, value)
                        return out
                else:
                    value = None
                _note_files(out, letter, value, spec)
                out.options.append((letter, value))
                break
            out.options.append((letter, None))
            k += 1
    return out


def _splits_where_it_matters(value: Word, spec: Options) -> bool:
    """An option's separate value that bash expands when it runs may become several words, the first the value and
    the rest more arguments, one of them an option: only where an option would write or run something (as for an
    expanded argument, above)."""
    return bool(spec.forbidden) and (value.unknown or value.pattern)


def value_expands(program: str, option: str, value: Word) -> str:
    """Why an option's separate value that bash expands when it runs refuses the command."""
    return (
        f"{program} {option}'s value {value.raw} is expanded when it runs, so it could become more arguments, one "
        "an option that writes files or runs programs"
    )


def _note_files(out: ReadOptions, name: str, value: Word | None, spec: Options) -> None:
    if value is None:
        return
    if name in spec.reads:
        out.reads.append(value.value)
    if name in spec.writes:
        out.writes.append(value.value)


def unknown_paths(program: str, words: Sequence[Word]) -> str | None:
    """A reason when a path argument is only known at run time (so the permission check cannot see it)."""
    for word in words:
        if word.unknown:
            return (
                f"{program} reads {word.raw}, a path that is only known when the command runs, so it cannot be "
                "checked against the working directories"
            )
    return None


def unknown_paths_verdict(program: str, words: Sequence[Word]) -> Verdict | None:
    """Not read-only when a path argument is only known at run time; the words as written are still reported as
    reads, so the permission side can see that a read it cannot place (`cat $(cat list)`) may reach anything."""
    problem = unknown_paths(program, words)
    return None if problem is None else Verdict.no(problem, reads=[w.raw for w in words if w.unknown])


def path_values(words: Sequence[Word]) -> list[str]:
    return [w.value for w in words if w.value != "-"]
