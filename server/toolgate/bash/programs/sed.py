"""sed: read-only unless it edits in place (-i) or its script writes (w, W, s///w) or runs (e, s///e) something.

The script is parsed command by command the way GNU sed reads it (addresses, `!`, blocks, `s` with any
delimiter and its flags), so `sed -n '/start/,/end/p'` and `sed 's/a/b/g'` are read-only while
`sed 's/a/b/w out'` and `sed '1e date'` are not. A script this parser cannot follow is not read-only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from toolgate.bash.parse import Word
from toolgate.bash.programs.base import Verdict, could_be_option, path_values, unknown_paths

_LONG = (
    "--quiet",
    "--silent",
    "--expression",
    "--file",
    "--in-place",
    "--line-length",
    "--null-data",
    "--zero-terminated",
    "--regexp-extended",
    "--separate",
    "--unbuffered",
    "--posix",
    "--debug",
    "--sandbox",
    "--follow-symlinks",
    "--binary",
    "--help",
    "--version",
)


@dataclass(slots=True)
class SedScript:
    problem: str | None = None
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)


def _resolve(name: str) -> str | None:
    if name in _LONG:
        return name
    matches = [option for option in _LONG if option.startswith(name)]
    return matches[0] if len(matches) == 1 else None


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
    scripts: list[Word] = []
    operands: list[Word] = []
    in_place = False
    i = 0
    only_operands = False
    while i < len(args):
        word = args[i]
        i += 1
        if only_operands or not could_be_option(word) or word.value == "-":
            operands.append(word)
            continue
        if word.unknown or word.pattern:
            return Verdict.no(f"sed's argument {word.raw} is expanded when it runs, so it could become -i or a script")
        text = word.value
        if text == "--":
            only_operands = True
            continue
        if text.startswith("--"):
            given, eq, inline = text.partition("=")
            option = _resolve(given)
            if option is None:
                return Verdict.no(f"sed {given} is an option this checker does not know")
            if option == "--expression":
                if eq:
                    scripts.append(Word.literal(inline))
                elif i < len(args):
                    scripts.append(args[i])
                    i += 1
            elif option == "--file":
                return Verdict.no("sed --file reads its script from a file this checker cannot see")
            elif option == "--in-place":
                in_place = True
            elif option == "--line-length" and not eq:
                i += 1
            continue
        k = 1
        while k < len(text):
            letter = text[k]
            if letter == "i":
                in_place = True
                break  # the rest of the word is the backup suffix
            if letter in "el":
                value = Word.literal(text[k + 1 :]) if text[k + 1 :] else (args[i] if i < len(args) else None)
                if not text[k + 1 :]:
                    i += 1
                if letter == "e" and value is not None:
                    scripts.append(value)
                break
            if letter == "f":
                return Verdict.no("sed -f reads its script from a file this checker cannot see")
            if letter not in "nErsuzbc":
                return Verdict.no(f"sed -{letter} is an option this checker does not know")
            k += 1
    if not scripts and operands:
        scripts, operands = [operands[0]], operands[1:]
    if in_place:
        return Verdict.no("sed -i edits files in place", writes=path_values(operands))
    reads: list[str] = []
    for script in scripts:
        if script.unknown:
            return Verdict.no(f"sed's script {script.raw} is only known when it runs")
        parsed = read_script(script.value)
        if parsed.problem is not None:
            return Verdict.no(parsed.problem, writes=parsed.writes)
        reads.extend(parsed.reads)
    problem = unknown_paths(name, operands)
    if problem is not None:
        return Verdict.no(problem)
    return Verdict.ok(
        "sed only prints (no -i, and its script neither writes nor runs anything)", reads + path_values(operands)
    )
