"""bashlex's syntax tree, turned into what the classifier needs: simple commands in source order.

Every simple command comes out with its words (after quote removal, with what bash would still expand
flagged), its assignments and its redirections, plus where it sits: which subshell scope, whether it is
inside a substitution or a function body. Operators between commands are collected; anything this module
does not model is reported as a problem, and a command with problems is never read-only (fail closed).

bashlex 0.18 raises on `[[ ]]`, `$(( ))`, `case`, `select` and `coproc`, and cannot read quoted here-document
delimiters (`<<'EOF'`) or the `time` keyword. The last two are common in agent commands and have a clear
meaning, so they are rewritten (same length, so positions still match the original text) before parsing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolgate.bash.quoting import CODE, COMMENT, ESCAPED, Heredoc, Scan, scan
from toolgate.bash.word_values import braced_expansions, word_value

# Redirection targets that are not files on disk: writing to them changes nothing.
SAFE_WRITE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2"})
_PLAIN_DELIMITER = re.compile(r"[A-Za-z0-9_.-]+")
_TIME_KEYWORD = re.compile(r"time(?:[ \t]+-p)?(?=[ \t]+[^\s-])")
_PARAMETER = re.compile(r"(#?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])(\[[^\]]*\])?(.*)", re.DOTALL)
_SUBSTRING = re.compile(r":\s*-?\d+(?::\s*-?\d+)?")
_HARMLESS_TRANSFORMS = frozenset("QEAKkauUL")


def parameter_problem(value: str) -> str | None:
    """Why the expansion ${value} is not modelled (None: it only substitutes a value).

    Some expansions evaluate text taken from a variable's value as code: ${x@P} (prompt expansion runs
    $(…) in it), ${!x} (indirection evaluates a subscript), and arithmetic in subscripts and substring
    offsets (${a[$i]}, ${x:$n}), where a value like `a[$(cmd)]` runs cmd. Assignments (${x:=v}) set variables.
    """
    if value.startswith("!"):
        return "it uses ${!…} indirect expansion, which can evaluate code hidden in a variable's value"
    match = _PARAMETER.fullmatch(value)
    if match is None:
        return f"it uses the parameter expansion ${{{value}}}, which this checker does not model"
    subscript, rest = match.group(3), match.group(4)
    if subscript is not None and subscript[1:-1] not in ("@", "*") and not subscript[1:-1].isdigit():
        return "it uses an array subscript that bash evaluates as arithmetic, which can run commands"
    if rest.startswith(":") and rest[1:2] not in ("-", "=", "+", "?") and not _SUBSTRING.fullmatch(rest):
        return "it uses a substring offset that bash evaluates as arithmetic, which can run commands"
    if rest.startswith(("=", ":=")):
        return f"it assigns a variable inside ${{{value}}}"
    if rest.startswith("@") and rest[1:] not in _HARMLESS_TRANSFORMS:
        return f"it uses ${{…{rest}}}, which can run commands found in a variable's value"
    return None


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # ">", ">>", "<", "&>", "&>>", ">|", "<>", "<<", "<<-", "<<<", ">&", "<&"
    target: str  # word after quote removal ("" for here-document bodies)
    fd: int | None
    writes: bool  # True unless /dev/null (or another stream device), an fd duplication/close, or an input
    expansion: bool = False  # the target holds $… or a pattern: its real value is only known when it runs


@dataclass(frozen=True, slots=True)
class Word:
    raw: str  # as written
    value: str  # after quote removal; expansions are kept as written
    expansion: bool = False  # $name, ${…}, $((…)), or a substitution: only known when it runs
    pattern: bool = False  # an unquoted glob or brace expansion: becomes other (or several) words
    tilde: bool = False  # starts with ~ or ~/ (the user's home)
    other_tilde: bool = False  # ~user, ~+, ~-
    substitution: bool = False  # contains $(…), `…`, <(…) or >(…)

    @property
    def unknown(self) -> bool:
        """Its value (even how many words it becomes) is decided only when the command runs."""
        return self.expansion or self.substitution or self.other_tilde

    @classmethod
    def literal(cls, value: str) -> Word:
        return cls(raw=value, value=value)


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    words: tuple[Word, ...]
    assignments: tuple[Word, ...]
    redirects: tuple[Redirect, ...]
    span: tuple[int, int]
    scope: tuple[int, ...]  # the chain of subshells it runs in; () is the top-level shell
    in_substitution: bool = False
    in_function: bool = False


@dataclass(slots=True)
class ParsedScript:
    commands: list[ParsedCommand] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)
    has_substitution: bool = False
    problems: list[str] = field(default_factory=list)  # constructs that are not modelled (⇒ parsed=False)
    functions: list[str] = field(default_factory=list)
    loop_variables: list[Word] = field(default_factory=list)
    # For each `for NAME in WORDS` loop: the variable and its words (None: no `in`, it loops over "$@").
    loops: list[tuple[Word, tuple[Word, ...] | None]] = field(default_factory=list)
    # The program whose exit status becomes the whole command's (None when that is not a simple pipeline).
    final_command: ParsedCommand | None = None


@dataclass(frozen=True, slots=True)
class _Ctx:
    scope: tuple[int, ...] = ()
    in_substitution: bool = False
    in_function: bool = False
    redirects: tuple[Redirect, ...] = ()


def _prepare(text: str, info: Scan) -> str:
    """Same-length rewrites for what bashlex cannot read: quoted here-document delimiters, the `time` keyword."""
    chars = list(text)
    for heredoc in info.heredocs:
        if not heredoc.quoted or not _PLAIN_DELIMITER.fullmatch(heredoc.delimiter):
            continue
        start, end = heredoc.delimiter_span
        padded = heredoc.delimiter.ljust(end - start)
        chars[start:end] = list(padded)
    for match in _TIME_KEYWORD.finditer(text):
        start = match.start()
        if info.mask[start] != CODE or (start and text[start - 1] not in " \t\n;&|(){}!"):
            continue
        before = text[:start].rstrip(" \t")
        if before and before[-1] not in "\n;&|({!" and not before.endswith(("then", "do", "else")):
            continue
        chars[start : match.end()] = [" "] * (match.end() - start)
    return "".join(chars)


def _only_comments(info: Scan) -> bool:
    """Nothing runs: only unquoted blanks, comments and line continuations. (A quoted word is a command:
    `'rm' '-rf' /x` has no unquoted letter in it, yet it runs rm.)"""
    text, mask = info.text, info.mask
    for k, ch in enumerate(text):
        code = mask[k]
        if code == COMMENT or (code == CODE and ch.isspace()):
            continue
        if code == ESCAPED and (ch == "\n" or (ch == "\\" and text.startswith("\n", k + 1))):
            continue  # a backslash-newline joins lines and is itself nothing
        return False
    return True


def _parse_problem(exc: Exception, text: str) -> str:
    import bashlex.errors

    message = str(exc).strip()
    if "[[" in text and ("unexpected token" in message or isinstance(exc, bashlex.errors.ParsingError)):
        return "it uses [[ … ]], a conditional expression this checker does not model"
    if isinstance(exc, NotImplementedError):
        lowered = message.lower()
        for needle, name in (
            ("arithmetic", "arithmetic expansion $(( … ))"),
            ("pattern", "a case statement"),
            ("select", "a select loop"),
            ("coproc", "a coprocess"),
            ("time", "the time keyword in this position"),
        ):
            if needle in lowered:
                return f"it uses {name}, which this checker does not model"
        return f"it uses a shell construct this checker does not model ({message})"
    return f"it could not be parsed as a bash command ({message})"


def _guard_unclosed_braces() -> None:
    """Make bashlex refuse, instead of loop on, a word holding `${` with no `}` after it.

    bashlex 0.18's tokenizer lets such a word through when the `${` is single-quoted after other characters
    (`echo a'${'`), and its expansion then takes find()'s -1 as the brace's position and starts the word over,
    forever: a command a model can send would hang the classifier. The refusal is a ParsingError, so the command
    is "could not be parsed", never read-only (fail closed)."""
    import bashlex.errors
    import bashlex.subst

    expand = getattr(bashlex.subst, "_paramexpand", None)
    if expand is None or getattr(expand, "guarded", False):
        return  # (None: a bashlex without this function, where the guard has nothing to wrap)

    def guarded(parser: Any, string: str, start: int) -> Any:
        if string.startswith("${", start) and string.find("}", start + 2) < 0:
            raise bashlex.errors.ParsingError("unexpected EOF while looking for matching '}'", string, start)
        return expand(parser, string, start)

    guarded.guarded = True  # type: ignore[attr-defined]
    bashlex.subst._paramexpand = guarded


def parse(text: str, info: Scan) -> ParsedScript:
    """Parse `text` (already scanned by `quoting.scan`) into simple commands. Never raises."""
    script = ParsedScript()
    if info.unterminated:
        script.problems.append(f"it is incomplete: {info.unterminated} is never closed")
        return script
    if _only_comments(info):
        return script
    # Imported here, not with the module: building bashlex's parser takes ~0.15 s, and most commands never need it
    # (shell.plain parses the plain ones), so a session that runs only plain commands never pays for it.
    import bashlex
    import bashlex.errors

    _guard_unclosed_braces()
    try:
        prepared = _prepare(text, info)
        trees = bashlex.parse(prepared)
    except (bashlex.errors.ParsingError, NotImplementedError) as exc:
        script.problems.append(_parse_problem(exc, text))
        return script
    except Exception as exc:  # bashlex has internal errors on odd input; they mean "not understood"
        script.problems.append(f"it could not be parsed as a bash command ({type(exc).__name__}: {exc})")
        return script
    walker = _Walker(text, prepared, info, script)
    try:
        for index, tree in enumerate(trees):
            if index:
                script.operators.append("\n")
            walker.node(tree, _Ctx())
    except RecursionError:
        walker.problem("it nests constructs too deeply to check")
        return script
    if len(info.substitutions) > walker.substitutions:
        # bashlex does not look inside some constructs (a default value in ${x:-…}, for one); a substitution
        # it did not report is one whose commands we cannot see.
        script.has_substitution = True
        walker.problem("it runs a command substitution where this checker cannot see its commands")
    script.final_command = walker.final_of(trees[-1]) if trees else None
    return script


class _Walker:
    def __init__(self, text: str, prepared: str, info: Scan, script: ParsedScript) -> None:
        self.text = text
        self.prepared = prepared
        self.script = script
        self.heredocs: dict[int, Heredoc] = {h.operator_start: h for h in info.heredocs}
        self.scopes = 0
        self.substitutions = 0  # substitution nodes bashlex reported

    def _new_scope(self, ctx: _Ctx) -> tuple[int, ...]:
        self.scopes += 1
        return (*ctx.scope, self.scopes)

    def problem(self, message: str) -> None:
        if message not in self.script.problems:
            self.script.problems.append(message)

    # --- structure --------------------------------------------------------------------------------
    def node(self, n: Any, ctx: _Ctx) -> None:
        kind = getattr(n, "kind", None)
        if kind == "list":
            for part in n.parts:
                if part.kind == "operator":
                    self.script.operators.append(part.op)
                else:
                    self.node(part, ctx)
        elif kind == "pipeline":
            self._pipeline(n, ctx)
        elif kind == "command":
            self._command(n, ctx)
        elif kind == "compound":
            self._compound(n, ctx)
        elif kind in ("if", "while", "until"):
            for part in n.parts:
                if part.kind != "reservedword":
                    self.node(part, ctx)
        elif kind == "for":
            self._for(n, ctx)
        elif kind == "function":
            self._function(n, ctx)
        elif kind in ("reservedword", "operator", "pipe"):
            return
        else:
            self.problem(f"it contains a {kind or 'syntax'} node this checker does not model")

    def _pipeline(self, n: Any, ctx: _Ctx) -> None:
        members = [p for p in n.parts if p.kind not in ("pipe", "reservedword")]
        for part in n.parts:
            if part.kind == "pipe":
                self.script.operators.append(part.pipe)
        for member in members:
            # Every member of a real pipeline runs in its own subshell: a `cd` there changes nothing after it.
            inner = _Ctx(self._new_scope(ctx), ctx.in_substitution, ctx.in_function, ctx.redirects)
            self.node(member, inner if len(members) > 1 else ctx)

    def _compound(self, n: Any, ctx: _Ctx) -> None:
        items = list(n.list)
        extra = tuple(self._redirect(r, ctx) for r in getattr(n, "redirects", []) or [])
        opener = items[0] if items and items[0].kind == "reservedword" else None
        inner = _Ctx(ctx.scope, ctx.in_substitution, ctx.in_function, ctx.redirects + extra)
        if opener is not None and opener.word == "(":
            if self.text.startswith("((", opener.pos[0]):
                self.problem("it uses (( … )), an arithmetic command this checker does not model")
                return
            inner = _Ctx(self._new_scope(ctx), ctx.in_substitution, ctx.in_function, inner.redirects)
        for item in items:
            if item.kind != "reservedword":
                self.node(item, inner)

    def _for(self, n: Any, ctx: _Ctx) -> None:
        parts = list(n.parts)
        seen_in = seen_do = False
        variable: Word | None = None
        items: list[Word] = []
        for part in parts:
            if part.kind == "reservedword":
                seen_in = seen_in or part.word == "in"
                seen_do = seen_do or part.word == "do"
                continue
            if not seen_do and part.kind == "word":
                word = self._word(part, ctx)
                if variable is None:
                    variable = word
                    self.script.loop_variables.append(word)
                elif seen_in:
                    items.append(word)
                else:
                    self.problem("it uses a for loop form this checker does not model")
            else:
                self.node(part, ctx)
        if variable is None:
            self.problem("it uses a for loop form this checker does not model")
        else:
            self.script.loops.append((variable, tuple(items) if seen_in else None))

    def _function(self, n: Any, ctx: _Ctx) -> None:
        names = [p for p in n.parts if p.kind == "word"]
        self.script.functions.append(names[0].word if names else "?")
        inner = _Ctx(ctx.scope, ctx.in_substitution, True, ctx.redirects)
        for part in n.parts:
            if part.kind not in ("word", "reservedword"):
                self.node(part, inner)

    # --- simple commands --------------------------------------------------------------------------------
    def _command(self, n: Any, ctx: _Ctx) -> None:
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = list(ctx.redirects)
        for part in n.parts:
            if part.kind == "word":
                words.append(self._word(part, ctx))
            elif part.kind == "assignment":
                word = self._word(part, ctx)
                # bashlex calls `a=b` an assignment even after the command name (`env A=1 x`): there it is a word.
                (words if words else assignments).append(word)
            elif part.kind == "redirect":
                redirects.append(self._redirect(part, ctx))
            else:
                self.problem(f"it contains a {part.kind} inside a command, which this checker does not model")
        start, end = n.pos
        for heredoc in self.heredocs.values():
            if start <= heredoc.operator_start < end:
                end = max(end, heredoc.delimiter_span[1])  # bashlex measured the rewritten delimiter
        self.script.commands.append(
            ParsedCommand(
                words=tuple(words),
                assignments=tuple(assignments),
                redirects=tuple(redirects),
                span=(start, end),
                scope=ctx.scope,
                in_substitution=ctx.in_substitution,
                in_function=ctx.in_function,
            )
        )

    def _word(self, n: Any, ctx: _Ctx) -> Word:
        raw = self.text[n.pos[0] : n.pos[1]]
        substitution = self._substitutions(n, ctx)
        if "${" in raw:
            # bashlex cuts ${…} at the first "}", so nested expansions are found from the raw text instead.
            for inner in braced_expansions(raw, scan(raw).mask):
                problem = parameter_problem(inner)
                if problem is not None:
                    self.problem(problem)
        info = word_value(raw)
        expansion = info.expansion or substitution or _has_parameter(n)
        if not expansion:
            value = info.value
        elif self.prepared[n.pos[0] : n.pos[1]] == raw:
            value = n.word  # bashlex keeps an expansion as written, nested quotes included
        else:
            value = raw  # the word holds a rewritten here-document delimiter; show it as the user wrote it
        return Word(raw, value, expansion, info.pattern, info.tilde, info.other_tilde, substitution)

    def _substitutions(self, n: Any, ctx: _Ctx) -> bool:
        """Walk the commands of every $(…), `…`, <(…) and >(…) inside node `n`; True if there were any."""
        found = False
        for part in getattr(n, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                found = True
                self.substitutions += 1
                self.script.has_substitution = True
                inner = _Ctx(self._new_scope(ctx), True, ctx.in_function, ())
                self.node(part.command, inner)
            else:
                found = self._substitutions(part, ctx) or found
        return found

    def _redirect(self, n: Any, ctx: _Ctx) -> Redirect:
        op: str = n.type
        fd = n.input if isinstance(n.input, int) else None
        output = n.output
        if op in ("<<", "<<-"):
            self._heredoc_body(n)
            return Redirect(op, "", fd, False)
        if isinstance(output, int):
            return Redirect(op, str(output), fd, False)  # an fd duplication such as 2>&1
        if output == "-" or output is None:
            return Redirect(op, "-" if output == "-" else "", fd, False)  # closing an fd
        word = self._word(output, ctx)
        target = word.value
        if op in ("<", "<&", "<<<"):
            return Redirect(op, target, fd, False, word.unknown or word.pattern)
        if op == ">&" and target.isdigit():
            return Redirect(op, target, fd, False)
        unknown = word.unknown or word.pattern
        writes = unknown or target not in SAFE_WRITE_TARGETS
        return Redirect(op, target, fd, writes, unknown)

    def _heredoc_body(self, n: Any) -> None:
        start = n.pos[0]
        heredoc = next((self.heredocs[k] for k in range(start, start + 4) if k in self.heredocs), None)
        if heredoc is None or heredoc.quoted or heredoc.body_span is None:
            return
        body = self.text[heredoc.body_span[0] : heredoc.body_span[1]]
        if "$(" in body or "`" in body:
            self.script.has_substitution = True
            self.problem("a here-document body runs a command substitution, which this checker does not model")
        if "$[" in body:
            self.problem("a here-document body uses arithmetic expansion, which this checker does not model")
        for inner in braced_expansions(body):
            problem = parameter_problem(inner)
            if problem is not None:
                self.problem(problem)

    def final_of(self, tree: Any) -> ParsedCommand | None:
        """The simple command whose exit status is the whole command's, if the last part is a simple pipeline."""
        node = tree
        while getattr(node, "kind", None) == "list":
            parts = [p for p in node.parts if p.kind != "operator"]
            if not parts:
                return None
            node = parts[-1]
        if getattr(node, "kind", None) == "pipeline":
            members = [p for p in node.parts if p.kind not in ("pipe", "reservedword")]
            if any(p.kind == "reservedword" for p in node.parts):
                return None  # `! cmd` inverts the status
            node = members[-1] if members else None
        if getattr(node, "kind", None) != "command":
            return None
        for command in reversed(self.script.commands):
            if command.span[0] == node.pos[0] and not command.in_substitution:
                return command
        return None


def _has_parameter(n: Any) -> bool:
    # bashlex reports $'…' and $"…" as a parameter without a name; word_values.word_value decodes those itself.
    return any(
        (part.kind == "parameter" and getattr(part, "value", None)) or _has_parameter(part)
        for part in getattr(n, "parts", None) or []
    )
