"""The ladder: one decision for one call, from its facts and the rules. No I/O beyond resolving symlinks.

    deny rules → ask rules → the tool's own check → safety checks (no mode skips them) → bypassPermissions
    → allow rules → the mode (read-only inside the working directories; acceptEdits: file edits there) → ask

"Automatic" modes are acceptEdits and bypassPermissions: nobody approves each call, so an allow rule that lets
any code run (`Bash(python:*)`, tool-wide `Bash`) is not honoured there. plan mode honours allow rules only
for read-only calls: in plan mode nothing that can change anything runs without a person saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolgate.core.paths import display_path, inside_any, is_within, resolved_forms
from toolgate.core.permission import PermissionCheck, PermissionMode, RuleSuggestion
from toolgate.permissions.bash import ACCEPT_EDITS_COMMANDS, CommandPart
from toolgate.permissions.command_forms import exact_text
from toolgate.permissions.facts import CallFacts
from toolgate.permissions.rules import (
    BASH,
    EDIT,
    EDIT_FAMILY,
    READ,
    READ_FAMILY,
    Behavior,
    Rule,
    command_words_match,
    domain_matches,
)
from toolgate.permissions.safety import dangerous_removal, protected_glob_write, protected_write
from toolgate.permissions.sources import RuleBook, RuleEntry
from toolgate.permissions.suggestions import suggest

Stage = Literal[
    "deny_rule", "ask_rule", "tool", "safety", "bypass", "allow_rule", "mode", "ask", "hook", "hand_back", "settings"
]
AUTOMATIC_MODES = frozenset({PermissionMode.ACCEPT_EDITS, PermissionMode.BYPASS})


@dataclass(frozen=True, slots=True)
class Evaluation:
    behavior: Behavior
    reason: str
    stage: Stage
    read_only: bool
    rule: str | None = None
    suggestions: tuple[RuleSuggestion, ...] = ()


@dataclass(frozen=True, slots=True)
class LadderInput:
    facts: CallFacts
    book: RuleBook
    mode: PermissionMode
    working_dirs: Sequence[Path]
    workspace: Path
    home: Path
    tool_check: PermissionCheck
    # Whether a Bash rule's fixed command part is, by itself, read-only (`git log` is; `npm test` is not).
    reader_rule: Callable[[Rule], bool] = lambda _rule: False


@dataclass(slots=True)
class Need:
    """Something in the call that nothing has allowed yet."""

    kind: Literal["read", "write", "command", "tool", "fetch"]
    reason: str
    path: Path | None = None
    part: CommandPart | None = None


@dataclass(slots=True)
class Coverage:
    needs: list[Need] = field(default_factory=list)
    rules: list[RuleEntry] = field(default_factory=list)
    unhonoured: list[RuleEntry] = field(default_factory=list)  # code-execution rules skipped in automatic mode
    readers: list[tuple[RuleEntry, CommandPart]] = field(default_factory=list)  # reader rules that did not stretch


def _forms(path: Path) -> list[Path]:
    return resolved_forms(path)


def _bash_parts(facts: CallFacts) -> list[CommandPart]:
    return facts.bash.parts if facts.bash is not None else []


def _all_reads(facts: CallFacts) -> list[Path]:
    return [*facts.reads, *(p for part in _bash_parts(facts) for p in part.reads)]


def _all_writes(facts: CallFacts) -> list[Path]:
    return [*facts.writes, *(p for part in _bash_parts(facts) for p in part.writes)]


def _maybe_touched(facts: CallFacts) -> list[Path]:
    """Paths named as arguments of programs the classifier cannot vouch for: they may be read or written."""
    return [p for part in _bash_parts(facts) for p in part.arg_paths]


# --- steps 1 and 2: deny and ask rules ---------------------------------------------------------------------


def _bash_hit(entry: RuleEntry, facts: CallFacts) -> str | None:
    bash = facts.bash
    if bash is None or entry.rule.kind not in ("exact", "prefix", "glob"):
        return None
    if entry.rule.kind == "exact" and exact_text(entry.rule.specifier) == exact_text(bash.command):
        return f"`{exact_text(bash.command)}`"
    for part in bash.parts:
        if any(command_words_match(entry.rule, form, ignore_case=True) for form in part.deny_forms):
            return f"`{part.text.strip()}`"
    for form in bash.crude_forms:
        if command_words_match(entry.rule, form, ignore_case=True):
            return f"`{' '.join(form)}` (inside the command)"
    return None


def _path_hit(entry: RuleEntry, paths: Sequence[Path], workspace: Path) -> str | None:
    for path in paths:
        if any(entry.matches_path(form) for form in _forms(path)):
            return display_path(path, workspace)
    return None


def find_rule(inp: LadderInput, behavior: Behavior) -> tuple[RuleEntry, str] | None:
    """The first rule of `behavior` that matches any part of the call, and what it matched."""
    facts = inp.facts
    for entry in inp.book.of(behavior):
        rule = entry.rule
        if rule.kind == "tool":
            if any(rule.covers_tool(name) for name in facts.names):
                return entry, f"every {rule.tool} call"
            continue
        hit: str | None = None
        if rule.tool == BASH:
            hit = _bash_hit(entry, facts)
        elif rule.kind == "path" and rule.tool == READ:
            hit = _path_hit(entry, [*_all_reads(facts), *_maybe_touched(facts)], inp.workspace)
        elif rule.kind == "path" and rule.tool == EDIT:
            hit = _path_hit(entry, [*_all_writes(facts), *_maybe_touched(facts)], inp.workspace)
        elif rule.kind == "domain" and facts.host is not None and domain_matches(rule, facts.host):
            hit = facts.host
        if hit is not None:
            return entry, hit
    return None


# --- step 4: safety --------------------------------------------------------------------------------------


def _has_path_rules(book: RuleBook, tool: str) -> bool:
    return any(e.rule.tool == tool and e.rule.kind == "path" for e in book.entries if e.behavior != "allow")


def _guarded_paths(book: RuleBook) -> list[RuleEntry]:
    return [e for e in book.entries if e.behavior != "allow" and e.rule.tool == READ and e.rule.kind == "path"]


def _part_safety(part: CommandPart, inp: LadderInput, dotglob: bool) -> str | None:
    """What makes one simple command impossible to clear without a person (None: nothing)."""
    book, shown = inp.book, f"`{part.text.strip()}`"
    unknowable = "deny or ask rules protect some files, and there is no way to tell beforehand whether"
    if part.dynamic_program and any(e.rule.tool == BASH and e.behavior != "allow" for e in book.entries):
        return (
            f"{shown} runs a program only known when it runs, so the deny and ask rules for commands cannot be checked"
        )
    if part.unresolved_writes:
        return f"{shown} writes {part.unresolved_writes[0]}, which cannot be checked beforehand"
    guarded = _guarded_paths(book)
    if part.dynamic_args and (guarded or _has_path_rules(book, EDIT)):
        return f"{shown} has arguments only known when it runs; {unknowable} they name one of them"
    for path in part.arg_paths:
        reason = protected_write(path, book.settings_files, holds=False)
        if reason is not None:
            return f"{shown} may change a protected place: {reason}"
    if guarded and part.unresolved_reads:
        return f"{shown} reads {part.unresolved_reads[0]}; {unknowable} this is one of them"
    if guarded and part.glob_reads:
        return f"{shown} reads files matching {part.glob_reads[0].raw}; {unknowable} they are among them"
    for tree in part.tree_reads:
        if any(e.may_match_below(tree) for e in guarded):
            where = display_path(tree, inp.workspace)
            return f"{shown} reads everything below {where}, where deny or ask rules protect files"
    for glob in part.glob_writes:
        reason = "the command may change how patterns expand" if dotglob else None
        reason = reason or protected_glob_write(glob.base, glob.tail, book.settings_files)
        if reason is not None:
            return f"{shown} writes to files matching {glob.raw}: {reason}"
        if _has_path_rules(book, EDIT):
            return f"{shown} writes to files matching {glob.raw}; {unknowable} they are among them"
    if part.removes:
        for target in [*part.writes, *(g.base for g in part.glob_writes if g.tail in ("*", "*/", ".*"))]:
            reason = dangerous_removal(target, inp.home, inp.working_dirs)
            if reason is not None:
                return f"{shown}: {reason}"
    return None


def safety_reason(inp: LadderInput) -> str | None:
    facts = inp.facts
    if facts.problem is not None:
        return f"it cannot be checked: {facts.problem}"
    bash = facts.bash
    if bash is not None and bash.opaque is not None:
        return f"the command cannot be checked safely: {bash.opaque}"
    for path in _all_writes(facts):
        reason = protected_write(path, inp.book.settings_files)
        if reason is not None:
            return f"it writes a protected place: {reason}"
    for part in _bash_parts(facts):
        reason = _part_safety(part, inp, bash is not None and bash.dotglob)
        if reason is not None:
            return reason
    return None


# --- steps 6 and 7: allow rules, then the mode -------------------------------------------------------------


def _honoured(entry: RuleEntry, inp: LadderInput, cov: Coverage) -> bool:
    if entry.code_execution and inp.mode in AUTOMATIC_MODES:
        if entry not in cov.unhonoured:
            cov.unhonoured.append(entry)
        return False
    return inp.mode is not PermissionMode.PLAN or inp.facts.read_only


def _path_allowed(
    path: Path, tools: tuple[str, ...], inp: LadderInput, cov: Coverage, *, inside_is_enough: bool
) -> bool:
    """Every resolved form of `path` is either inside a working directory (when that is enough) or covered
    by an honoured allow rule of the given tools: a link inside the workspace needs its target allowed too."""
    roots = [form for d in inp.working_dirs for form in resolved_forms(d)]
    used: list[RuleEntry] = []
    for form in _forms(path):
        entry = next(
            (
                e
                for e in inp.book.of("allow")
                if e.rule.kind == "path" and e.rule.tool in tools and e.matches_path(form) and _honoured(e, inp, cov)
            ),
            None,
        )
        if entry is not None:
            used.append(entry)  # allow rules come before the mode, so a rule that applies is the reason
        elif not (inside_is_enough and any(is_within(form, root) for root in roots)):
            return False
    cov.rules.extend(e for e in used if e not in cov.rules)
    return True


def _command_allowed(part: CommandPart, command: str, single: bool, inp: LadderInput, cov: Coverage) -> bool:
    for entry in inp.book.of("allow"):
        rule = entry.rule
        if rule.tool != BASH or rule.kind not in ("exact", "prefix", "glob"):
            continue
        matched = part.words_ok and any(command_words_match(rule, form) for form in part.allow_forms)
        if matched and rule.kind != "exact" and not part.read_only and inp.reader_rule(rule):
            # The rule names a command that only reads (`git log:*`, `find:*`); arguments that make it write or
            # run something (`--output=f`, `-exec`) are not what it granted.
            cov.readers.append((entry, part))
            matched = False
        if not matched and rule.kind == "exact":
            matched = single and exact_text(rule.specifier) == exact_text(command)
        if matched and _honoured(entry, inp, cov):
            if entry not in cov.rules:
                cov.rules.append(entry)
            return True
    return False


def _tool_wide_allow(inp: LadderInput, cov: Coverage) -> bool:
    for entry in inp.book.of("allow"):
        covers = entry.rule.kind == "tool" and any(entry.rule.covers_tool(n) for n in inp.facts.names)
        if covers and _honoured(entry, inp, cov):
            cov.rules.append(entry)
            return True
    return False


def _whole_command_exact(inp: LadderInput, cov: Coverage) -> bool:
    """An exact rule naming the whole (compound) command, as the person saw it, covers every part."""
    bash = inp.facts.bash
    if bash is None or len(bash.parts) < 2:
        return False
    for entry in inp.book.of("allow"):
        rule = entry.rule
        same = rule.tool == BASH and rule.kind == "exact" and exact_text(rule.specifier) == exact_text(bash.command)
        if same and _honoured(entry, inp, cov):
            cov.rules.append(entry)
            return True
    return False


def _domain_allowed(inp: LadderInput, cov: Coverage) -> bool:
    host = inp.facts.host
    for entry in inp.book.of("allow"):
        if entry.rule.kind == "domain" and host and domain_matches(entry.rule, host) and _honoured(entry, inp, cov):
            cov.rules.append(entry)
            return True
    return False


def coverage(inp: LadderInput) -> Coverage:
    facts, mode, cov = inp.facts, inp.mode, Coverage()
    accept_edits = mode is PermissionMode.ACCEPT_EDITS

    def inside(path: Path) -> bool:
        return inside_any(path, inp.working_dirs)

    def shown(path: Path) -> str:
        return display_path(path, inp.workspace)

    tool_wide = _tool_wide_allow(inp, cov)
    if facts.family == "fetch":
        if not tool_wide and not _domain_allowed(inp, cov):
            cov.needs.append(Need("fetch", f"it fetches from {facts.host}, and no rule allows that host"))
        return cov
    if facts.family == "other":
        if not tool_wide and not facts.read_only:
            cov.needs.append(Need("tool", f"{facts.tool_name} can change things, and no rule allows it"))
        return cov

    reads = list(facts.reads)
    writes = list(facts.writes)
    for part in _bash_parts(facts):
        reads.extend(part.reads)
        writes.extend(part.writes)
    skip_paths = tool_wide and facts.family != "bash"  # `Read` / `Edit` alone covers every path
    # Read rules govern Read/Glob/Grep and Bash reads; Edit rules govern the edit tools and Bash writes. Another
    # tool that touches paths needs a rule of its own (its deny side is still checked by both).
    governed = facts.family == "bash" or any(n in READ_FAMILY | EDIT_FAMILY for n in facts.names)
    read_tools = (READ, EDIT) if governed else ()
    write_tools = (EDIT,) if governed else ()
    edit_tool = facts.family == "bash" or any(n in EDIT_FAMILY for n in facts.names)
    for path in dict.fromkeys(reads):
        if skip_paths or _path_allowed(path, read_tools, inp, cov, inside_is_enough=True):
            continue
        cov.needs.append(Need("read", f"it reads {shown(path)}, which is outside the working directories", path))
    for path in dict.fromkeys(writes):
        if skip_paths or _path_allowed(path, write_tools, inp, cov, inside_is_enough=edit_tool and accept_edits):
            continue
        where = "inside" if inside(path) else "outside"
        cov.needs.append(Need("write", f"it writes {shown(path)} ({where} the working directories)", path))

    bash = facts.bash
    if bash is None or tool_wide or _whole_command_exact(inp, cov):
        return cov
    single = len(bash.parts) == 1
    for part in bash.parts:
        for glob in part.glob_writes:
            if not (accept_edits and inside(glob.base)):
                cov.needs.append(
                    Need("write", f"`{part.text.strip()}` writes to files matching {glob.raw}", None, part)
                )
        for raw in part.unresolved_reads:
            cov.needs.append(Need("read", f"`{part.text.strip()}` reads {raw}", None, part))
        if part.read_only or _command_allowed(part, bash.command, single, inp, cov):
            continue
        if accept_edits and part.program in ACCEPT_EDITS_COMMANDS and (part.writes or part.glob_writes):
            continue
        if accept_edits and part.read_only_but_redirects:
            continue  # `echo x > notes.md`: its writes were checked above like any other
        detail = f" ({part.classifier_reason})" if part.classifier_reason else ""
        cov.needs.append(
            Need("command", f"`{part.text.strip()}` is not read-only{detail}, and no rule allows it", None, part)
        )
    if bash.command_level is not None:
        cov.needs.append(Need("command", f"the command as a whole is not read-only: {bash.command_level}"))
    if not bash.parts and not cov.needs:
        cov.needs.append(Need("command", "the command could not be split into commands to check"))
    return cov


# --- the ladder --------------------------------------------------------------------------------------------


def _rule_note(entry: RuleEntry) -> str:
    return f"`{entry.rule.text}` ({entry.source.describe()})"


def evaluate(inp: LadderInput) -> Evaluation:
    facts = inp.facts
    ro = facts.read_only
    denied = find_rule(inp, "deny")
    if denied is not None:
        entry, what = denied
        return Evaluation("deny", f"{what} is denied by the rule {_rule_note(entry)}", "deny_rule", ro, entry.rule.text)
    asked = find_rule(inp, "ask")
    if asked is not None:
        entry, what = asked
        return Evaluation(
            "ask", f"the rule {_rule_note(entry)} asks before {what} runs", "ask_rule", ro, entry.rule.text
        )

    check = inp.tool_check
    if check.behavior == "deny":
        return Evaluation("deny", check.reason or f"{facts.tool_name} refused this call", "tool", ro)
    if check.behavior == "ask":
        return Evaluation(
            "ask", check.reason or f"{facts.tool_name} asks for approval", "tool", ro, None, tuple(check.suggestions)
        )

    unsafe = safety_reason(inp)
    if unsafe is not None:
        return Evaluation("ask", f"{unsafe}; this is always asked, in every mode", "safety", ro)
    if check.behavior == "allow":
        return Evaluation("allow", check.reason or f"{facts.tool_name} allowed this call", "tool", ro)
    if inp.mode is PermissionMode.BYPASS:
        return Evaluation(
            "allow", "bypassPermissions mode allows every call that passes the safety checks", "bypass", ro
        )

    cov = coverage(inp)
    if not cov.needs:
        if cov.rules:
            names = ", ".join(_rule_note(e) for e in cov.rules)
            extra = " (the rest is read-only inside the working directories)" if facts.family == "bash" else ""
            return Evaluation("allow", f"allowed by {names}{extra}", "allow_rule", ro, cov.rules[0].rule.text)
        if inp.mode is PermissionMode.ACCEPT_EDITS and not ro:
            return Evaluation(
                "allow", "acceptEdits mode allows file changes inside the working directories", "mode", ro
            )
        return Evaluation("allow", "it is read-only and stays inside the working directories", "mode", ro)

    first = cov.needs[0]
    reason = first.reason
    if len(cov.needs) > 1:
        more = len(cov.needs) - 1
        reason += f" (and {more} more thing{'s need' if more > 1 else ' needs'} approval)"
    if cov.readers:
        entry, part = cov.readers[0]
        reason += (
            f"; the rule {_rule_note(entry)} covers only uses that just read, and `{part.text.strip()}` does more "
            f"({part.classifier_reason or 'it is not read-only'})"
        )
    if cov.unhonoured:
        reason += (
            f"; the rule {_rule_note(cov.unhonoured[0])} is not used in {inp.mode.value} mode because it would let "
            "any code run unattended"
        )
    if inp.mode is PermissionMode.PLAN and not ro:
        reason += "; plan mode runs only read-only calls without asking"
    return Evaluation("ask", reason, "ask", ro, None, tuple(suggest(cov.needs, facts, inp.workspace)))
