"""The ladder: one decision for one call, from its facts and the rules. No I/O beyond resolving symlinks.

Steps 1-5 are here; steps 6-7 (what allow rules and the mode cover) are in `coverage.py`.

    deny rules → ask rules → the tool's own check → safety checks (no mode skips them) → bypassPermissions
    → allow rules → the mode (read-only inside the working directories; acceptEdits: file edits there) → ask

What each mode means is read from its row in `core.permission.MODE_TRAITS`, never from its name. "Automatic"
modes (today acceptEdits and bypassPermissions): nobody approves each call, so an allow rule that lets any code
run (`Bash(python:*)`, tool-wide `Bash`) is not honoured there. A read-only (planning) mode honours allow rules
only for read-only calls: nothing that can change anything runs without a person saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from toolgate.core.paths import display_path, inside_any
from toolgate.core.permission import Grounds, PermissionMode, RuleSuggestion, mode_traits
from toolgate.permissions.bash import CommandPart
from toolgate.permissions.command_forms import exact_text
from toolgate.permissions.coverage import Need, coverage
from toolgate.permissions.facts import CallFacts
from toolgate.permissions.ladder_input import LadderInput
from toolgate.permissions.rules import (
    BASH,
    EDIT,
    READ,
    Behavior,
    command_words_match,
    domain_matches,
)
from toolgate.permissions.safety import (
    credential_read,
    dangerous_removal,
    destructive_reason,
    device_write,
    protected_glob_write,
    protected_write,
)
from toolgate.permissions.sources import RuleBook, RuleEntry
from toolgate.permissions.suggestions import suggest

Stage = Literal[
    "deny_rule",
    "ask_rule",
    "tool",
    "safety",
    "bypass",
    "allow_rule",
    "mode",
    "sandbox",
    "ask",
    "hook",
    "hand_back",
    "settings",
]


@dataclass(frozen=True, slots=True)
class Evaluation:
    behavior: Behavior
    reason: str
    stage: Stage
    read_only: bool
    rule: str | None = None
    suggestions: tuple[RuleSuggestion, ...] = ()
    # acceptEdits mode would allow this call (asked in default mode only because it changes files inside the
    # working directories): the person may switch to it instead of allowing a rule no single rule can express
    offers_accept_edits: bool = False

    @property
    def grounds(self) -> Grounds | None:
        """Why it allows: "read_only" when the call's read-only verdict is what let it through (the read-only
        rung of any mode, bypassPermissions, or an allow rule over a read-only call), so that where a sandbox
        exists the call runs read-only and a wrong verdict fails there; None when it does not allow."""
        if self.behavior != "allow":
            return None
        if self.read_only and self.stage in _READ_ONLY_STAGES:
            return "read_only"
        return _GROUNDS.get(self.stage, "tool")


_READ_ONLY_STAGES = frozenset({"mode", "allow_rule", "bypass"})
_GROUNDS: dict[Stage, Grounds] = {
    "allow_rule": "allow_rule",
    "mode": "mode",
    "bypass": "bypass",
    "sandbox": "sandbox",
    "hook": "hook",
    "tool": "tool",
}


def _bash_parts(facts: CallFacts) -> list[CommandPart]:
    return facts.bash.parts if facts.bash is not None else []


def _all_reads(facts: CallFacts) -> list[Path]:
    return [*facts.reads, *(p for part in _bash_parts(facts) for p in part.reads)]


def _all_writes(facts: CallFacts) -> list[Path]:
    if facts.bash is None:
        return facts.writes  # a tool's own (most calls): no copy to build
    return [*facts.writes, *(p for part in facts.bash.parts for p in part.writes)]


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


def _path_hit(entry: RuleEntry, paths: Sequence[Path], inp: LadderInput) -> str | None:
    for path in paths:
        if any(entry.matches_path(form) for form in inp.forms(path)):
            return display_path(path, inp.workspace)
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
            hit = _path_hit(entry, [*_all_reads(facts), *_maybe_touched(facts)], inp)
        elif rule.kind == "path" and rule.tool == EDIT:
            hit = _path_hit(entry, [*_all_writes(facts), *_maybe_touched(facts)], inp)
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
        reason = protected_write(path, book.settings_files, holds=False, hooks_dirs=book.hooks_dirs)
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
    destroys = device_write(part.writes) or next(
        (
            r
            for form in part.deny_forms
            if (r := destructive_reason(form, [*part.arg_paths, *part.writes], inp.home, part.dynamic_args))
        ),
        None,
    )
    if destroys is not None:
        return f"{shown}: {destroys}"
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
    if bash is not None and bash.exposure is not None:
        return f"it may show secrets from the environment: {bash.exposure}"
    # Per-command checks first: "it removes your home directory" says more than "it writes a protected place".
    for part in _bash_parts(facts):
        reason = _part_safety(part, inp, bash is not None and bash.dotglob)
        if reason is not None:
            return reason
    for path in _all_writes(facts):
        reason = protected_write(path, inp.book.settings_files, hooks_dirs=inp.book.hooks_dirs, resolved=inp.resolved)
        if reason is not None:
            return f"it writes a protected place: {reason}"
    return credential_read(facts, inp.home, inp.resolved)


# --- the sandbox step ------------------------------------------------------------------------------------


def _contained(needs: Sequence[Need], inp: LadderInput) -> bool:
    """Whether everything left to ask about is what the sandbox contains: running code, and writing inside
    the working directories. A read outside them is not (the sandbox lets commands read the file system)."""
    if inp.facts.family != "bash" or not needs:
        return False

    def inside(path: Path) -> bool:
        return all(inside_any(form, inp.working_dirs, inp.resolved) for form in inp.forms(path))

    for need in needs:
        if need.kind == "command":
            continue
        if need.kind == "write" and need.path is not None and inside(need.path):
            continue
        globs = need.part.glob_writes if need.kind == "write" and need.path is None and need.part else []
        if globs and all(inside(g.base) for g in globs):
            continue
        return False
    return True


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
    mode = mode_traits(inp.mode)
    if mode.allows_every_call:
        return Evaluation(
            "allow", "bypassPermissions mode allows every call that passes the safety checks", "bypass", ro
        )

    cov = coverage(inp)
    if not cov.needs:
        if cov.rules:
            names = ", ".join(_rule_note(e) for e in cov.rules)
            extra = " (the rest is read-only inside the working directories)" if facts.family == "bash" else ""
            return Evaluation("allow", f"allowed by {names}{extra}", "allow_rule", ro, cov.rules[0].rule.text)
        if mode.allows_file_edits and not ro:
            return Evaluation(
                "allow", "acceptEdits mode allows file changes inside the working directories", "mode", ro
            )
        return Evaluation("allow", "it is read-only and stays inside the working directories", "mode", ro)

    if inp.sandbox_auto_allow and not mode.read_only and _contained(cov.needs, inp):
        return Evaluation(
            "allow",
            "it runs in the sandbox, where it can write only inside the working directories (not their protected "
            "paths) and has no network (sandbox.autoAllow)",
            "sandbox",
            ro,
        )
    shown_needs = [need.reason for need in cov.needs[:3]]
    reason = "; ".join(shown_needs)
    if len(cov.needs) > len(shown_needs):
        more = len(cov.needs) - len(shown_needs)
        reason += f"; and {more} more part{'s' if more > 1 else ''} of it need{'' if more > 1 else 's'} approval"
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
    if mode.read_only and not ro:
        reason += "; plan mode runs only read-only calls without asking"
    offers = mode.offers_accept_edits and not ro and not coverage(_in_accept_edits(inp)).needs
    return Evaluation("ask", reason, "ask", ro, None, tuple(suggest(cov.needs, facts, inp.workspace)), offers)


def _in_accept_edits(inp: LadderInput) -> LadderInput:
    return replace(inp, mode=PermissionMode.ACCEPT_EDITS)
