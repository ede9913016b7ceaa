"""Permission rules: the string grammar, and matching a rule against a call's facts. Pure: no I/O.

    Tool                    every call of the tool (also `Tool()` and `Tool(*)`)
    Bash(npm run test)      exactly this command (compared word by word, so quoting style does not matter)
    Bash(git log:*)         this command and any arguments after it; the prefix ends at a word boundary
    Bash(git * --oneline)   `*` globs within one simple command
    Read(src/**)            gitignore-style paths (see `patterns.py`) for Read, which also governs Glob/Grep/LSP;
    Edit(./.env)            Edit, which also governs Write, NotebookEdit, ApplyPatch and Rename
    WebFetch(domain:host)   fetches from this host; `*.host` covers its subdomains only (see `network.py`)

Inside the parentheses `\\(`, `\\)` and `\\\\` stand for `(`, `)` and `\\`. A rule that does not parse is reported
with its reason (`RuleError`) and never used.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from toolgate.permissions.network import UrlRefused
from toolgate.permissions.network import domain_matches as network_domain_matches
from toolgate.permissions.network import domain_spec as network_domain_spec
from toolgate.permissions.patterns import PathPattern, PatternError, compile_pattern

Behavior = Literal["allow", "ask", "deny"]
RuleKind = Literal["tool", "exact", "prefix", "glob", "path", "domain"]

BASH = "Bash"
READ = "Read"
EDIT = "Edit"
WEB_FETCH = "WebFetch"
# Tools whose calls are governed by Read rules, and by Edit rules.
READ_FAMILY = frozenset({"Read", "Glob", "Grep", "LSP"})
EDIT_FAMILY = frozenset({"Edit", "Write", "NotebookEdit", "ApplyPatch", "Rename"})

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")

# Commands that run whatever code or command their arguments name. As a bare prefix allow rule (`python:*`,
# `npm run:*`, `bash:*`, `sudo:*`), such a rule allows anything at all: it is flagged when added and never
# honoured in an automatic mode. Two-word entries are matched on the first two words.
CODE_EXECUTION_COMMANDS = frozenset(
    {
        # interpreters
        "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "tsx", "ts-node",
        "ruby", "irb", "perl", "php", "lua", "luajit", "Rscript", "osascript", "pwsh", "powershell",
        "awk", "gawk", "mawk", "nawk", "jshell", "groovy", "scala", "julia", "tclsh", "expect",
        # shells
        "sh", "bash", "zsh", "fish", "dash", "ksh", "csh", "tcsh", "busybox",
        # package runners
        "npx", "bunx", "pnpx", "uvx",
        # wrappers that run another command
        "env", "xargs", "sudo", "doas", "su", "eval", "exec", "command", "builtin", "source", ".", "ssh",
        "nohup", "timeout", "time", "nice", "ionice", "stdbuf", "watch", "chroot", "unshare", "nsenter",
        "setsid", "flock", "strace", "ltrace", "gdb", "valgrind", "parallel", "script", "tmux", "screen",
        "find",
    }
)  # fmt: skip
CODE_EXECUTION_PAIRS = frozenset(
    {
        ("npm", "run"), ("npm", "exec"), ("npm", "x"), ("yarn", "run"), ("yarn", "exec"), ("yarn", "dlx"),
        ("pnpm", "run"), ("pnpm", "exec"), ("pnpm", "dlx"), ("bun", "run"), ("bun", "x"), ("uv", "run"),
        ("poetry", "run"), ("pipx", "run"), ("pdm", "run"), ("hatch", "run"), ("cargo", "run"), ("go", "run"),
        ("deno", "run"), ("deno", "eval"), ("dotnet", "run"), ("git", "-c"), ("kubectl", "exec"),
        ("docker", "exec"), ("docker", "run"), ("podman", "exec"), ("podman", "run"),
    }
)  # fmt: skip
_VERSIONED_INTERPRETER = re.compile(r"(python|pypy|ruby|perl|php|lua|node)[0-9][0-9.]*")


class RuleError(ValueError):
    """A rule string that cannot be used; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule. `text` is the string as written (shown in decisions and listings)."""

    text: str
    tool: str
    kind: RuleKind
    specifier: str = ""  # the unescaped content between the parentheses
    words: tuple[str, ...] = ()  # exact/prefix: the command's words
    pattern: PathPattern | None = None  # path: the compiled pattern (relative to `path_root`)
    path_root: Literal["rule", "home", "filesystem"] = "rule"  # what a path pattern is relative to

    @property
    def tool_wide(self) -> bool:
        return self.kind == "tool"

    def covers_tool(self, tool_name: str) -> bool:
        """Whether this rule is about calls of `tool_name` at all (before looking at the input)."""
        if self.tool == tool_name:
            return True
        # `mcp__server` covers every tool of that MCP server (`mcp__server__tool`).
        if self.tool.startswith("mcp__") and self.tool.count("__") == 1 and tool_name.startswith(self.tool + "__"):
            return True
        # `Edit` rules govern every file-writing tool, `Read` rules every file-reading one.
        if self.tool == EDIT and tool_name in EDIT_FAMILY:
            return True
        return self.tool == READ and tool_name in READ_FAMILY


def _split_rule(text: str) -> tuple[str, str | None]:
    """(tool, raw content) where content is between the first unescaped `(` and a final unescaped `)`."""
    open_at = -1
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "(":
            open_at = i
            break
        i += 1
    if open_at == -1:
        if ")" in text:
            raise RuleError("it has a ')' without a matching '('")
        return text, None
    if not text.endswith(")") or (len(text) - open_at < 2):
        raise RuleError("the '(' is not closed by a ')' at the very end of the rule")
    body = text[open_at + 1 : -1]
    # The closing parenthesis must not itself be escaped (count the backslashes before it).
    backslashes = len(body) - len(body.rstrip("\\"))
    if backslashes % 2:
        raise RuleError("the final ')' is escaped, so the '(' is never closed")
    return text[:open_at], body


def _unescape(body: str) -> str:
    """`\\(` → `(`, `\\)` → `)`, `\\\\` → `\\`; other backslashes are kept (a Bash glob's `\\*` stays literal)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] in "()\\":
            out.append(body[i + 1])
            i += 2
            continue
        if body[i] in "()":
            raise RuleError(f"an unescaped {body[i]!r} inside the parentheses (write \\{body[i]} for a literal one)")
        out.append(body[i])
        i += 1
    return "".join(out)


def _shell_words(spec: str) -> tuple[str, ...]:
    try:
        words = tuple(shlex.split(spec, posix=True))
    except ValueError as exc:
        raise RuleError(f"the command cannot be split into words ({exc})") from None
    if not words:
        raise RuleError("the command is empty")
    return words


def _has_unescaped_star(spec: str) -> bool:
    i = 0
    while i < len(spec):
        if spec[i] == "\\":
            i += 2
            continue
        if spec[i] == "*":
            return True
        i += 1
    return False


def _bash_rule(text: str, spec: str) -> Rule:
    if "\n" in spec or "\r" in spec:
        raise RuleError("a Bash rule cannot contain a line break")
    if spec.endswith(":*") and not spec.endswith("\\:*"):
        prefix = spec[:-2].rstrip()
        if not prefix:
            raise RuleError("the prefix before ':*' is empty (use the tool name alone to cover every command)")
        if _has_unescaped_star(prefix):
            raise RuleError("a ':*' prefix rule cannot also contain '*' globs")
        return Rule(text, BASH, "prefix", spec, words=_shell_words(prefix))
    if _has_unescaped_star(spec):
        return Rule(text, BASH, "glob", spec.strip())
    return Rule(text, BASH, "exact", spec, words=_shell_words(spec))


def _path_rule(text: str, tool: str, spec: str) -> Rule:
    root: Literal["rule", "home", "filesystem"] = "rule"
    pattern = spec.strip()
    if pattern.startswith("//"):
        root, pattern = "filesystem", pattern[1:]
    elif pattern == "~" or pattern.startswith("~/"):
        root, pattern = "home", "/" + pattern[2:] if len(pattern) > 2 else "/"
    elif pattern.startswith("~"):
        raise RuleError("'~user' paths are not supported; write the absolute path as //home/user/...")
    try:
        compiled = compile_pattern(pattern)
    except PatternError as exc:
        raise RuleError(str(exc)) from None
    return Rule(text, tool, "path", spec, pattern=compiled, path_root=root)


@lru_cache(maxsize=4096)
def parse_rule(text: str) -> Rule:
    """Parse one rule string; raise `RuleError` with the reason when it cannot be used."""
    if not isinstance(text, str) or not text.strip():
        raise RuleError("the rule is empty")
    if text != text.strip():
        raise RuleError("the rule has spaces around it; remove them")
    tool, body = _split_rule(text)
    if not _TOOL_NAME.fullmatch(tool):
        raise RuleError(f"{tool!r} is not a tool name (expected a name such as Bash, Read or Edit)")
    if body is None:
        return Rule(text, tool, "tool")
    spec = _unescape(body)
    if spec.strip() in ("", "*"):
        return Rule(text, tool, "tool")
    if tool == BASH:
        return _bash_rule(text, spec)
    if tool in (READ, EDIT):
        return _path_rule(text, tool, spec)
    if tool == WEB_FETCH:
        if not spec.startswith("domain:"):
            raise RuleError("WebFetch rules name a host: WebFetch(domain:example.com)")
        return Rule(text, tool, "domain", _domain_spec(spec.removeprefix("domain:").strip()))
    if tool in READ_FAMILY:
        raise RuleError(f"{tool} calls are governed by Read rules: write Read({spec}) instead")
    if tool in EDIT_FAMILY:
        raise RuleError(f"{tool} calls are governed by Edit rules: write Edit({spec}) instead")
    raise RuleError(f"{tool} rules take no specifier: write {tool} to cover every {tool} call")


# --- Bash matching ---------------------------------------------------------------------------------------


def command_words_match(rule: Rule, words: Sequence[str], *, ignore_case: bool = False) -> bool:
    """Whether a Bash rule's command part matches one simple command given as words (argv).

    `ignore_case` is for deny and ask rules: on a case-insensitive file system `RM` runs `rm`, and matching
    more is the safe side for them."""
    if not words:
        return False
    fold = str.casefold if ignore_case else str
    candidate = tuple(fold(w) for w in words)
    if rule.kind in ("exact", "prefix"):
        fixed = tuple(fold(w) for w in rule.words)
        return candidate == fixed if rule.kind == "exact" else candidate[: len(fixed)] == fixed
    if rule.kind == "glob":
        return glob_matches(fold(rule.specifier), " ".join(candidate))
    return False


def glob_matches(spec: str, text: str) -> bool:
    """`*` matches any run of characters; `\\*` is a literal star. A trailing ` *` also matches nothing
    (`git *` covers bare `git`)."""
    regex = "".join(
        "\\*" if tok == "\\*" else ".*" if tok == "*" else re.escape(tok)
        for tok in re.findall(r"\\\*|\*|[^*\\]+|\\", spec)
    )
    if re.fullmatch(regex, text, re.DOTALL):
        return True
    return spec.endswith(" *") and spec.count("*") == 1 and text == spec[:-2]


def leading_command(words: Sequence[str]) -> tuple[str, ...]:
    """The words that name the program (one, or two for `npm run`-style pairs)."""
    if len(words) >= 2 and (Path(words[0]).name, words[1]) in CODE_EXECUTION_PAIRS:
        return (Path(words[0]).name, words[1])
    return (Path(words[0]).name,) if words else ()


def is_code_execution_name(words: Sequence[str]) -> bool:
    head = leading_command(words)
    if len(head) == 2:
        return True
    if not head:
        return False
    name = head[0]
    return name in CODE_EXECUTION_COMMANDS or _VERSIONED_INTERPRETER.fullmatch(name) is not None


def is_code_execution_rule(rule: Rule) -> bool:
    """An allow rule that would let any code run: tool-wide Bash, or a prefix/glob whose fixed part is only a
    code-running command (plus flags): `python:*`, `python -c:*`, `npm run:*`, `bash *`, `sudo:*`, `env:*`."""
    if rule.tool != BASH:
        return False
    if rule.kind == "tool":
        return True
    if rule.kind == "exact":
        return False
    if rule.kind == "prefix":
        fixed = list(rule.words)
    else:
        head = rule.specifier.split("*", 1)[0]
        try:
            fixed = shlex.split(head)
        except ValueError:
            return True  # cannot tell: assume the worst
        if not fixed:
            return True  # `*…`: matches any command
        if not head.endswith(" ") and head.strip():
            fixed = fixed[:-1]  # `pyth*` leaves the last word open; only what is complete counts
            if not fixed:
                return True
    if len(fixed) == 1 and any(Path(fixed[0]).name == first for first, _ in CODE_EXECUTION_PAIRS):
        return True  # `npm:*` covers `npm run anything`, `git:*` covers `git -c alias.x=!sh ...`
    if not is_code_execution_name(fixed):
        return False
    rest = fixed[len(leading_command(fixed)) :]
    return all(word.startswith("-") for word in rest)


# --- WebFetch matching -----------------------------------------------------------------------------------


def _domain_spec(raw: str) -> str:
    """A domain rule's host in the one spelling URLs are compared in (lower case, IDNA, no trailing dot)."""
    try:
        return network_domain_spec(raw)
    except UrlRefused as exc:
        raise RuleError(str(exc)) from None


def domain_matches(rule: Rule, host: str) -> bool:
    """`WebFetch(domain:example.com)` covers that host only; `WebFetch(domain:*.example.com)` its subdomains
    only (`api.example.com`, never `example.com` itself or `evil-example.com`)."""
    return network_domain_matches(rule.specifier, host)
