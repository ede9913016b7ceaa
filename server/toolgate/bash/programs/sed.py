"""sed: read-only unless it edits in place (-i) or its script writes (w, W, s///w) or runs (e, s///e) something.

The script is parsed command by command the way GNU sed reads it (addresses, `!`, blocks, `s` with any
delimiter and its flags), so `sed -n '/start/,/end/p'` and `sed 's/a/b/g'` are read-only while
`sed 's/a/b/w out'` and `sed '1e date'` are not. A script this parser cannot follow is not read-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Options, Verdict, names, path_values, read_options, unknown_paths_verdict

# GNU sed reads its options with getopt_long: clusters (-ni), attached values (-e p, -ep), `--opt=value`, any
# unambiguous abbreviation (--expr=p), options after operands. -i takes an optional, attached suffix.
_OPTIONS = Options(
    short_values="el",
    long_values=names("--expression --line-length"),
    long_flags=names(
        "--quiet --silent --in-place --null-data --zero-terminated --regexp-extended --separate --unbuffered "
        "--posix --debug --sandbox --follow-symlinks --binary --help --version"
    ),
    forbidden={
        "-f": "sed -f reads its script from a file this checker cannot see",
        "--file": "sed --file reads its script from a file this checker cannot see",
    },
    strict=True,
    known_short="nErsuzbi",
    optional_values="i",
)


@dataclass(slots=True)
class SedScript:
    problem: str | None = None
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)


class _ScriptReader:
    """GNU sed's script grammar, far enough to find every command that writes, reads or runs."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.out = SedScript()
        self.follows_directly = False

    def fail(self, message: str) -> SedScript:
        self.out.problem = message
        return self.out

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip_blank(self, newlines: bool = False) -> None:
        while self.i < len(self.s) and (self.s[self.i] in " \t" or (newlines and self.s[self.i] in "\n;")):
            self.i += 1

    def delimited(self, delim: str) -> bool:
        """Skip to just after the next unescaped `delim` (as GNU sed's match_slash does)."""
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch == "\\":
                self.i += 2
                continue
            if ch == delim:
                self.i += 1
                return True
            if ch == "\n" and delim != "\n":
                return False
            self.i += 1
        return False

    def address(self) -> bool:
        ch = self.peek()
        if ch.isdigit():
            while self.peek().isdigit():
                self.i += 1
            if self.peek() == "~":
                self.i += 1
                while self.peek().isdigit():
                    self.i += 1
            return True
        if ch == "$":
            self.i += 1
            return True
        if ch in "/\\":
            if ch == "\\":
                self.i += 1
                delim = self.peek()
                if not delim or delim in "\n\\":
                    return False
            else:
                delim = "/"
            self.i += 1
            if not self.delimited(delim):
                return False
            while self.peek() in ("I", "M"):
                self.i += 1
            return True
        return False

    def rest_of_line(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text = self.s[self.i : end].strip()
        self.i = end
        return text

    def read(self) -> SedScript:
        while True:
            self.skip_blank(newlines=True)
            if self.i >= len(self.s):
                return self.out
            if self.peek() == "#":
                self.rest_of_line()
                continue
            if self.address():
                self.skip_blank()
                if self.peek() == ",":
                    self.i += 1
                    self.skip_blank()
                    if self.peek() in "+~":
                        self.i += 1
                        while self.peek().isdigit():
                            self.i += 1
                    elif not self.address():
                        return self.fail("sed's script has an address this checker cannot follow")
            self.skip_blank()
            while self.peek() == "!":
                self.i += 1
                self.skip_blank()
            opens_block = self.peek() == "{"
            problem = self.command()
            if problem is not None:
                return self.fail(problem)
            if opens_block or self.follows_directly:
                self.follows_directly = False
                continue  # commands may follow `{` (and a label) directly
            self.skip_blank()
            if self.peek() == "#":
                self.rest_of_line()
            if self.peek() not in ("", "\n", ";", "}"):
                return self.fail("sed's script has text after a command that this checker cannot follow")

    def command(self) -> str | None:
        cmd = self.peek()
        self.i += 1
        if cmd in "{}=dDgGhHnNpPxzF":
            return None
        if cmd in "lLqQ":
            self.skip_blank()
            while self.peek().isdigit():
                self.i += 1
            return None
        if cmd in "bTt:v":
            # GNU sed ends a label (and v's version) at blanks, `;` or `}`, and the next command may follow
            # right after the blank (`t end e date` runs `e date`). `#` stays in the label here: if sed ended
            # the label there instead, the rest would be a comment, and reading more commands only refuses more.
            self.skip_blank()
            while self.peek() not in ("", "\n", ";", "}", " ", "\t"):
                self.i += 1
            self.follows_directly = True
            return None
        if cmd in "aic":
            # Text to print (GNU one-line form runs to the end of the line, with \-newline continuing it).
            while self.i < len(self.s) and self.s[self.i] != "\n":
                self.i += 2 if self.s[self.i] == "\\" else 1
            return None
        if cmd in "rR":
            path = self.rest_of_line()
            if not path:
                return "sed's r command has no file name"
            self.out.reads.append(path)
            return None
        if cmd in "wW":
            path = self.rest_of_line()
            self.out.writes.append(path)
            return f"sed's {cmd} command writes to the file {path!r}"
        if cmd == "e":
            return "sed's e command runs a shell command"
        if cmd == "y":
            delim = self.peek()
            self.i += 1
            if not delim or delim in "\n\\" or not self.delimited(delim) or not self.delimited(delim):
                return "sed's y command is not complete"
            return None
        if cmd == "s":
            return self.substitute()
        return f"sed's script uses {cmd!r}, a command this checker does not know"

    def substitute(self) -> str | None:
        delim = self.peek()
        self.i += 1
        if not delim or delim in "\n\\" or not self.delimited(delim) or not self.delimited(delim):
            return "sed's s command is not complete"
        while self.i < len(self.s):
            flag = self.s[self.i]
            if flag in "gpiImM0123456789":
                self.i += 1
            elif flag == "e":
                return "sed's s///e flag runs the result as a shell command"
            elif flag == "w":
                self.i += 1
                path = self.rest_of_line()
                self.out.writes.append(path)
                return f"sed's s///w flag writes to the file {path!r}"
            else:
                break
        return None


def read_script(text: str) -> SedScript:
    return _ScriptReader(text).read()


def check_sed(name: str, args: Sequence[Word]) -> Verdict:
    parsed = read_options(name, args, _OPTIONS)
    if parsed.problem is not None:
        refused = parsed.refusal()
        return Verdict.no(
            refused.reason.replace("expanded when it runs", "expanded when it runs (it could be -i)"),
            refused.writes,
            refused.reads,
        )
    scripts = [value for option, value in parsed.options if option in ("-e", "--expression") and value is not None]
    operands = parsed.operands
    if not parsed.has("-e", "--expression") and operands:
        scripts, operands = [operands[0]], operands[1:]
    if parsed.has("-i", "--in-place"):
        return Verdict.no("sed -i edits files in place", writes=path_values(operands))
    reads: list[str] = []
    for script in scripts:
        if script.unknown:
            return Verdict.no(f"sed's script {script.raw} is only known when it runs")
        found = read_script(script.value)
        if found.problem is not None:
            return Verdict.no(found.problem, writes=found.writes)
        reads.extend(found.reads)
    unknown = unknown_paths_verdict(name, operands)
    if unknown is not None:
        return unknown
    return Verdict.ok(
        "sed only prints (no -i, and its script neither writes nor runs anything)", reads + path_values(operands)
    )
