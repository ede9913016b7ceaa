"""Steps 6 and 7 of the ladder: what allow rules and the mode cover, and what is left to ask about.

Every read, every write and every simple command of a call must be covered: by an honoured allow rule, or by
the mode (read-only inside the working directories in every mode; in acceptEdits also file changes there and
mkdir/touch/mv/cp). Whatever is not covered becomes a `Need`, and the first need is the reason to ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolgate.core.paths import display_path, inside_any, texts_inside
from toolgate.core.permission import mode_traits
from toolgate.permissions.bash import ACCEPT_EDITS_COMMANDS, CommandPart
from toolgate.permissions.command_forms import exact_text
from toolgate.permissions.ladder_input import LadderInput
from toolgate.permissions.rules import BASH, EDIT, EDIT_FAMILY, READ, READ_FAMILY, command_words_match, domain_matches
from toolgate.permissions.sources import RuleEntry

# The tools whose paths Read or Edit rules govern (built once: a set union per call was a visible part of a Read's
# decision).
_GOVERNED = READ_FAMILY | EDIT_FAMILY


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


def _honoured(entry: RuleEntry, inp: LadderInput, cov: Coverage) -> bool:
    mode = mode_traits(inp.mode)
    if entry.code_execution and mode.automatic:  # nobody approves each call: a rule that runs any code is off
        if entry not in cov.unhonoured:
            cov.unhonoured.append(entry)
        return False
    return not mode.read_only or inp.facts.read_only


def _path_allowed(
    path: Path, tools: tuple[str, ...], inp: LadderInput, cov: Coverage, *, inside_is_enough: bool
) -> bool:
    """Every resolved form of `path` is either inside a working directory (when that is enough) or covered
    by an honoured allow rule of the given tools: a link inside the workspace needs its target allowed too.

    On strings (`resolved_texts`, `texts_inside`: the same answers as `resolved_forms` and `is_within`); a form is
    made a `Path` only for the allow rules that could match it, and most calls meet none (building the forms
    and roots as `Path`s was most of a plain Read's decision)."""
    allow = inp.book.of("allow")
    candidates = [e for e in allow if e.rule.kind == "path" and e.rule.tool in tools] if allow else allow
    used: list[RuleEntry] = []
    for text in inp.texts(path):
        entry: RuleEntry | None = None
        if candidates:
            form = Path(text)
            entry = next((e for e in candidates if e.matches_path(form) and _honoured(e, inp, cov)), None)
        if entry is not None:
            used.append(entry)  # allow rules come before the mode, so a rule that applies is the reason
            continue
        # Form by form, in order: a form that fails ends the check before later forms meet the allow rules
        # (`_honoured` notes a rule it would not honour, and that note is part of the reason to ask).
        if not (inside_is_enough and texts_inside((text,), inp.working_dirs, inp.resolved)):
            return False
    if used:
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
    accept_edits = mode_traits(mode).allows_file_edits

    def inside(path: Path) -> bool:
        return inside_any(path, inp.working_dirs, inp.resolved)

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
    for part in facts.bash.parts if facts.bash is not None else []:
        reads.extend(part.reads)
        writes.extend(part.writes)
    skip_paths = tool_wide and facts.family != "bash"  # `Read` / `Edit` alone covers every path
    # Read rules govern Read/Glob/Grep and Bash reads; Edit rules govern the edit tools and Bash writes. Another
    # tool that touches paths needs a rule of its own (its deny side is still checked by both).
    governed = facts.family == "bash" or not _GOVERNED.isdisjoint(facts.names)
    read_tools = (READ, EDIT) if governed else ()
    write_tools = (EDIT,) if governed else ()
    edit_tool = facts.family == "bash" or not EDIT_FAMILY.isdisjoint(facts.names)
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
    for part in bash.parts if bash is not None else []:
        # Paths are checked whatever allows the command itself (even a rule naming the whole command).
        for glob in part.glob_writes:
            if not (accept_edits and inside(glob.base)):
                cov.needs.append(
                    Need("write", f"`{part.text.strip()}` writes to files matching {glob.raw}", None, part)
                )
        for raw in part.unresolved_reads:
            cov.needs.append(Need("read", f"`{part.text.strip()}` reads {raw}", None, part))
    if bash is None or tool_wide or _whole_command_exact(inp, cov):
        return cov
    single = len(bash.parts) == 1
    for part in bash.parts:
        if part.read_only or _command_allowed(part, bash.command, single, inp, cov):
            continue
        # mkdir/touch/mv/cp only when everything they name is in the working directories (`cp /etc/passwd .`).
        filing = accept_edits and part.program in ACCEPT_EDITS_COMMANDS and bool(part.writes or part.glob_writes)
        if filing and not part.dynamic_args and all(inside(p) for p in part.arg_paths):
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
