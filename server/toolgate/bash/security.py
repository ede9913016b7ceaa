"""Raw-text checks that run before any parsing.

Each looks for a way to make the text mean something different to bash than to a reader (or to our parser):
characters a terminal hides, spaces that are not word separators, `$IFS` games, hidden flags spelled with
escapes. A hit does not say the command is malicious, only that its meaning cannot be taken at face value,
so it is never read-only and a person should look at it. Every check returns plain-word reasons.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from toolgate.bash.programs.scripting import JQ_ENVIRONMENT
from toolgate.bash.quoting import CODE, COMMENT, ESCAPED, SINGLE, Scan, scan
from toolgate.core.child_env import is_secret_name

MAX_COMMAND_CHARS = 10_000

# Characters that look like (or are) blank space but that bash does not split words on.
_UNICODE_SPACES = frozenset(
    "\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u200b\u200c\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff\u0085"
)
# Bidirectional overrides and isolates reorder what a reader sees (the "Trojan Source" trick).
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")

_IFS = re.compile(r"\$IFS\b|\$\{[^}]*\bIFS\b")
_PROC_ENVIRON = re.compile(r"/proc/[^\s'\"]*environ")
_ZSH_BUILTINS = (
    "zmodload",
    "emulate",
    "sysopen",
    "sysread",
    "syswrite",
    "sysseek",
    "zpty",
    "ztcp",
    "zsocket",
    "zselect",
    "zstat",
    "zsystem",
    "mapfile",
    "zf_rm",
    "zf_mv",
    "zf_ln",
    "zf_chmod",
    "zf_chown",
    "zf_chgrp",
    "zf_mkdir",
    "zf_rmdir",
    "zf_sync",
)
_ZSH_COMMAND = re.compile(
    r"(?:^|[;&|(){}\n!`]|\$\()\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:(?:command|builtin|noglob|nocorrect|exec)\s+)*"
    r"(" + "|".join(_ZSH_BUILTINS) + r"|zf_\w+)(?=$|[\s;&|)])"
)
# Escapes in $'…' that can spell any character (and so any flag or command name).
_ANSI_CHARACTER_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]|u[0-9A-Fa-f]|U[0-9A-Fa-f]|[0-7]|c.|[eE])")


# The same sets as regex classes: one scan in C instead of a Python test per character of every command.
_OTHER_CONTROLS = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BIDI = re.compile("[" + "".join(sorted(_BIDI_CONTROLS)) + "]")
_SPACES = re.compile("[" + "".join(sorted(_UNICODE_SPACES)) + "]")


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name.lower()})" if name else "")


def _control_characters(command: str) -> list[str]:
    reasons: list[str] = []
    if "\x00" in command:
        reasons.append("it contains a NUL byte, which bash cannot pass to a program and silently cuts strings at")
    if "\r" in command:
        reasons.append(
            "it contains a carriage return, which makes a terminal overwrite the start of the line and so hides "
            "what really runs"
        )
    others = sorted(set(_OTHER_CONTROLS.findall(command)))
    if others:
        listed = ", ".join(_describe(ch) for ch in others[:3])
        reasons.append(f"it contains control characters ({listed}) that a terminal does not show as written")
    bidi = sorted(set(_BIDI.findall(command)))
    if bidi:
        reasons.append(
            f"it contains bidirectional text controls ({', '.join(_describe(ch) for ch in bidi[:3])}) that "
            "reorder how the command is displayed"
        )
    return reasons


def _unicode_whitespace(command: str, info: Scan) -> list[str]:
    found = sorted({m.group() for m in _SPACES.finditer(command) if info.mask[m.start()] in (CODE, ESCAPED)})
    if not found:
        return []
    listed = ", ".join(_describe(ch) for ch in found[:3])
    return [
        f"it contains unicode spaces or line separators outside quotes ({listed}); they look like word breaks "
        "but bash treats them as part of a word"
    ]


def _ifs(command: str, info: Scan) -> list[str]:
    for match in _IFS.finditer(command):
        if info.mask[match.start()] != SINGLE:
            return ["it uses $IFS, which changes how bash splits words and can hide spaces between arguments"]
    return []


def _proc_environ(command: str) -> list[str]:
    if _PROC_ENVIRON.search(command):
        return ["it reads /proc/*/environ, the environment of a process, which holds secrets such as API keys"]
    return []


def _escaped_operators(command: str, info: Scan) -> list[str]:
    found = []
    k, n = 0, len(command)
    while k < n - 1:
        if command[k] == "\\" and info.mask[k] == ESCAPED:
            if command[k + 1] in ";|&<>":
                found.append("\\" + command[k + 1])
            k += 2  # the escaped character is never itself an escaper
            continue
        k += 1
    if not found:
        return []
    listed = " ".join(dict.fromkeys(found))
    return [
        f"it contains backslash-escaped operators ({listed}): they are plain characters to bash but look like "
        "command separators or redirections"
    ]


def _ansi_quoting(command: str, info: Scan) -> list[str]:
    reasons: list[str] = []
    for string in info.ansi_strings:
        start = string.span[0]
        at_word_start = start == 0 or command[start - 1] in " \t\n;&|(){}<>" or info.mask[start - 1] not in (CODE,)
        if string.kind == "locale":
            reasons.append(
                '$"…" (locale quoting) is translated through message catalogs when it runs, so its text is not '
                "what is written"
            )
        elif _ANSI_CHARACTER_ESCAPE.search(string.content):
            reasons.append(
                "$'…' (ANSI-C quoting) with character escapes can spell a flag or command name that is not "
                "visible in the text"
            )
        elif at_word_start and string.content.startswith("-"):
            reasons.append("$'…' (ANSI-C quoting) is used to write a flag")
    return list(dict.fromkeys(reasons))


def _zsh(command: str) -> list[str]:
    match = _ZSH_COMMAND.search(command)
    if match:
        return [f"it runs {match.group(1)}, a zsh module builtin that can read, write or open files and sockets"]
    return []


def raw_check(command: str, info: Scan | None = None) -> tuple[str, ...]:
    """Reasons the raw text cannot be taken at face value (empty when it can)."""
    if len(command) > MAX_COMMAND_CHARS:
        return (f"it is {len(command):,} characters long, over the {MAX_COMMAND_CHARS:,} this checker analyses",)
    info = info or scan(command)
    reasons = [
        *_control_characters(command),
        *_unicode_whitespace(command, info),
        *_ifs(command, info),
        *_proc_environ(command),
        *_escaped_operators(command, info),
        *_ansi_quoting(command, info),
        *_zsh(command),
    ]
    return tuple(reasons)


# --- commands that show the environment ----------------------------------------------------------------------
# The child environment is scrubbed (core/child_env.py), but env.passThrough hands some secrets on on purpose, and
# a person should see any command that prints the environment or a secret-looking variable, in every mode.

_EXPANSION_NAME = re.compile(r"\$(\{[#!]?)?([A-Za-z_][A-Za-z0-9_]*)")
_DECLARE = frozenset({"declare", "typeset", "local", "readonly"})
# Interpreters given program text on the command line, and the ways their languages read the whole environment.
_INTERPRETER = re.compile(
    r"python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby|php[0-9.]*|lua[0-9.]*|Rscript"
)
_READS_ENVIRONMENT = re.compile(r"environ|process\.env|%ENV|\$ENV\b|\bENV\b|getenv|Deno\.env|Bun\.env|Sys\.getenv")
_CODE_OPTIONS = frozenset({"--eval", "--print", "-e", "-E", "-c", "-p", "-r", "eval"})


def _inline_code(args: Sequence[str]) -> list[str]:
    """The program texts given on the command line (`python -c CODE`, `perl -ne CODE`, `node --eval=CODE`)."""
    code: list[str] = []
    for index, word in enumerate(args):
        option, eq, inline = word.partition("=")
        if eq and option in _CODE_OPTIONS:
            code.append(inline)
        elif (
            word in _CODE_OPTIONS or (word[:1] == "-" and word[1:2] != "-" and word[-1:] in "ceEpr")
        ) and index + 1 < len(args):
            code.append(args[index + 1])
    return code


_ENV_VALUED = frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})


def _secret_expansion(command: str, info: Scan) -> str | None:
    for match in _EXPANSION_NAME.finditer(command):
        if info.mask[match.start()] in (SINGLE, ESCAPED, COMMENT):
            continue
        brace, name = match.group(1) or "", match.group(2)
        if brace.endswith("!"):
            return f"it expands ${{!{name}…}}, an indirect expansion that can name any variable, secrets included"
        if is_secret_name(name):
            return f"it expands ${name}, a variable whose name says it holds a secret"
    return None


def _operands(words: Sequence[str]) -> list[str]:
    return [w for w in words[1:] if not w.startswith("-") or w in ("-", "--")]


def _prints_environment(words: Sequence[str]) -> str | None:
    """Why this one command (as a deny form: wrappers already taken off) prints environment values, or None."""
    if not words:
        return None
    name = words[0].rstrip("/").rsplit("/", 1)[-1]
    args = list(words[1:])
    if name == "env":
        rest, skip = [], False
        for word in args:
            if skip:
                skip = False
            elif word in _ENV_VALUED:
                skip = True
            elif not word.startswith("-") and "=" not in word:
                rest.append(word)
        return None if rest else "env without a command prints every environment variable"
    if name == "printenv":
        operands = _operands(words)
        if not operands:
            return "printenv without a name prints every environment variable"
        secret = next((w for w in operands if is_secret_name(w)), None)
        return f"printenv {secret} prints a variable whose name says it holds a secret" if secret else None
    if name == "set" and not args:
        return "set without arguments prints every shell variable"
    if name == "export" and (not _operands(words) or any(w.startswith("-") and "p" in w for w in args)):
        return "export without a name (or with -p) prints every exported variable"
    if name in _DECLARE:
        operands = [w for w in args if not w.startswith(("-", "+"))]
        shows = any(w.startswith("-") and "p" in w for w in args)
        if not operands or (shows and any(is_secret_name(w.partition("=")[0]) for w in operands)):
            return f"{name} prints shell variables with their values"
    # Any cluster naming -v, -e or -A (`compgen -ve`): the options a word list could hold ask too, which is safe.
    if name == "compgen" and any(w.startswith("-") and not w.startswith("--") and set(w) & set("veA") for w in args):
        return "compgen lists the shell's variables"
    if _INTERPRETER.fullmatch(name) and any(_READS_ENVIRONMENT.search(code) for code in _inline_code(args)):
        return f"{name}'s program text reads the environment table"
    if name == "jq" and any(JQ_ENVIRONMENT.search(w) for w in args):
        return "jq's program reads environment variables (env, $ENV)"
    if name in ("awk", "gawk", "mawk", "nawk") and any("ENVIRON" in w for w in args):
        return f"{name}'s program reads ENVIRON, the table of every environment variable"
    if name == "ps" and any("e" in w and not w.startswith("-") for w in args):
        return "ps with e shows the environment of other processes"
    return None


def environment_exposure(command: str, forms: Iterable[Sequence[str]], info: Scan | None = None) -> str | None:
    """Why `command` may show environment values (a secret-looking variable, or all of them), or None.

    `forms`: the word lists of each simple command, with wrappers looked through (permissions/command_forms)."""
    reason = _secret_expansion(command, info or scan(command))
    if reason is not None:
        return reason
    for words in forms:
        reason = _prints_environment(words)
        if reason is not None:
            return reason
    return None
