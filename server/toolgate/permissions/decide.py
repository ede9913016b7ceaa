"""Deciding: the session's `PermissionPolicy` — hooks, then the ladder, then denial tracking.

    engine.decide(tool, input, ctx)      PreToolUse hooks, the ladder (`ladder.py`), PermissionRequest hooks for
                                         an ask, then denial tracking
    engine.evaluate(tool, input, ctx)    the ladder alone (what `Runtime.check` explains)
    engine.after_call(...)               PostToolUse (or PostToolUseFailure) hooks; their context is appended
    engine.hooks                         the session's hooks (`permissions/hooks/`), for the loop's own events
    engine.reload() / refresh()          re-read the settings files (refresh: only when one changed on disk)
    engine.read_denied(path) / problems / warnings

One engine serves one session and knows no runner: the explain/check entry point for a call given by name
is `Runtime.check` (runtime.py), and editing rules (settings files, session rules) is `edit_rules.py`, which
reloads the engine after every change.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from toolgate.core.change_guard import CHANGE_GUARD
from toolgate.core.containment import CONTAINMENT
from toolgate.core.context import HOME_DIR, ToolContext
from toolgate.core.messages import TextBlock, ToolResult
from toolgate.core.paths import pinned_resolutions, resolved_forms
from toolgate.core.permission import (
    Decision,
    DomainVerdict,
    PermissionCheck,
    PermissionMode,
    RuleScope,
    mode_traits,
)
from toolgate.core.tool import AnyTool
from toolgate.permissions.bash import Analyses, Classifier, load_classifier
from toolgate.permissions.denials import DenialTracker
from toolgate.permissions.domains import domain_verdict
from toolgate.permissions.facts import gather
from toolgate.permissions.hooks import ConfiguredHook, HookDispatcher, HookEvent, HookOutcome, compile_hooks
from toolgate.permissions.ladder import Evaluation, evaluate
from toolgate.permissions.ladder_input import LadderInput
from toolgate.permissions.rules import Behavior, Rule, parse_rule
from toolgate.permissions.sources import BEHAVIORS, RuleBook, RuleProblem, RuleSource, add_rules, load_rule_book

# A PreToolUse hook's allow replaces only the generic "nothing allowed it" ask: never a rule, a tool's own refusal
# or question, a safety check, or broken settings.
_HOOK_CAN_ALLOW = frozenset({"ask"})
# A PermissionRequest hook answers in the person's place, so it may answer what a person would be asked about:
# an ask rule's question, a tool's own, a PreToolUse hook's. Never a safety check (asked in every mode), broken
# settings, or a decision handed back to the person after repeated automatic denials.
_PERMISSION_HOOK_CAN_ANSWER = frozenset({"ask", "ask_rule", "tool", "hook"})
_MAX_PENDING = 256


class CheckResult(BaseModel):
    """The answer of `toolgate permissions check`, one per call; the sidecar gets the same shape."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    decision: Behavior
    read_only: bool
    reason: str
    rule: str | None = None


def code_execution_warning(rule: str) -> str:
    return (
        f"{rule} lets the model run any code it likes. It is honoured in default mode only; in acceptEdits and "
        "bypassPermissions mode it is ignored and such commands are asked about. Prefer a narrower rule."
    )


_StatKey = tuple[int, int, int] | None  # (mtime_ns, size, inode); None: no such file (or unreadable)


def _stat_key(path: str) -> _StatKey:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _changed(path: str, seen: _StatKey) -> bool:
    """Whether `path` is no longer as `seen`. Most settings files do not exist, and a failed stat raises, which
    costs twice what `access` takes to say the file is still missing."""
    if seen is None and not os.access(path, os.F_OK):
        return False
    return _stat_key(path) != seen


@dataclass(frozen=True, slots=True)
class _Pending:
    context: list[str]


class PermissionEngine:
    def __init__(
        self,
        workspace: Path,
        *,
        home: Path | None = None,
        environ: Mapping[str, str] | None = None,
        cli_rules: Mapping[Behavior, Sequence[str]] | None = None,
        settings_files: Sequence[Path] = (),
        read_settings_files: bool = True,
        trust_workspace: bool | None = None,
        classifier: Classifier | None = None,
    ) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        self.home = home or Path.home()
        self._environ = dict(os.environ if environ is None else environ)
        self._cli_rules = {b: list((cli_rules or {}).get(b, ())) for b in BEHAVIORS}
        self._flag_files = list(settings_files)
        self._read_files = read_settings_files
        self._trust_workspace = trust_workspace  # None: as the user settings' trustedWorkspaces say (trust.py)
        # Rules given for this session only (edit_rules.py adds and removes them; `reload` keeps them).
        self.session_rules: dict[Behavior, list[str]] = {b: [] for b in BEHAVIORS}
        self.classifier = classifier or load_classifier()
        self.analyses = Analyses(self.classifier)
        self.denials = DenialTracker()
        self._pending: dict[str, _Pending] = {}
        self._readers: dict[str, bool] = {}
        self.book = RuleBook()
        self.hooks = HookDispatcher(self.workspace, self._environ, lambda: self.book.pass_through)
        self.hooks_waiting: list[ConfiguredHook] = []  # workspace hooks whose content is not trusted (yet)
        self._watched: tuple[str, ...] = ()
        self._signature: tuple[_StatKey, ...] = ()
        self.hook_problems: list[RuleProblem] = []
        self.reload()

    # --- configuration ---------------------------------------------------------------------------------
    def reload(self) -> RuleBook:
        """Re-read every settings file (and keep the session's and the command line's rules)."""
        self.book = load_rule_book(
            self.workspace,
            home=self.home,
            environ=self._environ,
            session_rules=self.session_rules,
            cli_rules=self._cli_rules,
            flag_files=self._flag_files,
            read_files=self._read_files,
            trust_workspace=self._trust_workspace,
        )
        compiled = compile_hooks(self.book.hooks, self.book.trusted_hooks)
        self.hooks.replace(compiled.runnable)
        self.hooks_waiting, self.hook_problems = compiled.waiting, compiled.problems
        # Only files that are read are watched: with settings files off, an edit to one changes nothing.
        files = [*self.book.files.values(), *self.book.flag_files] if self._read_files else []
        self._watched = tuple(os.fspath(path) for path in files)
        # An edit landing between the read above and this stat is seen at the file's next change only; the
        # window is a few milliseconds, and a rule change through toolgate always reloads.
        self._signature = tuple(_stat_key(path) for path in self._watched)
        return self.book

    def refresh(self) -> bool:
        """Re-read the settings files when one changed on disk (a person edited it by hand). Cheap: one stat per
        file, stopping at the first that changed; nothing is read or parsed unless one did."""
        for path, seen in zip(self._watched, self._signature, strict=True):
            if _changed(path, seen):
                self.reload()
                return True
        return False

    @property
    def problems(self) -> list[str]:
        """Everything that could not be used, in words: broken files, invalid rules, unusable hook matchers."""
        return [problem.sentence for problem in self.settings_problems]

    @property
    def settings_problems(self) -> list[RuleProblem]:
        """The same, each with the file and place it is about."""
        return [*self.book.problems, *self.hook_problems]

    @property
    def warnings(self) -> list[str]:
        return [code_execution_warning(e.rule.text) for e in self.book.entries if e.code_execution]

    def _reader_rule(self, rule: Rule) -> bool:
        """Whether the command a Bash prefix/glob rule names is read-only on its own (cached per rule)."""
        known = self._readers.get(rule.text)
        if known is None:
            head = rule.words if rule.kind == "prefix" else tuple(rule.specifier.split("*", 1)[0].split())
            try:
                known = bool(head) and bool(self.classifier(shlex.join(head)).read_only)
            except Exception:
                known = True  # cannot tell: treat it as a reader's rule, which grants less
            self._readers[rule.text] = known
        return known

    # --- the policy ------------------------------------------------------------------------------------
    async def _tool_check(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> PermissionCheck:
        try:
            return await tool.check_permissions(tool_input, ctx)
        except Exception as exc:  # a broken check must never mean "allowed"
            ctx.logger.exception("%s: check_permissions raised", tool.name)
            return PermissionCheck(behavior="ask", reason=f"{tool.name} could not check this call ({exc})")

    async def evaluate(
        self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext, *, with_allow: str | None = None
    ) -> Evaluation:
        """The ladder alone: rules, the tool's own check, safety, mode. No hooks, no denial tracking.
        `with_allow`: as if that allow rule were in force too (nothing is saved; raises RuleError if invalid)."""
        facts = gather(tool, tool_input, ctx, self.analyses)
        check = await self._tool_check(tool, tool_input, ctx)
        book = self.book if with_allow is None else self._book_with_allow(with_allow)
        result = evaluate(
            LadderInput(
                facts,
                book,
                ctx.mode,
                ctx.working_dirs,
                ctx.workspace,
                ctx.get(HOME_DIR),
                check,
                self._reader_rule,
                sandbox_auto_allow=ctx.get(CONTAINMENT).auto_allows(tool.name, tool_input),
                resolved=pinned_resolutions(ctx.pinned),
            )
        )
        if result.behavior == "allow" and self.book.broken_files:
            broken = self.book.broken_files[0]
            return Evaluation(
                "ask",
                f"the settings file {broken.path} is broken ({broken}), so the rules in it cannot be honoured; "
                "calls are asked about until it is fixed",
                "settings",
                result.read_only,
            )
        return result

    def _tool_fields(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> dict[str, Any]:
        return {
            "tool_name": tool.name,
            "tool_input": tool_input.model_dump(mode="json", by_alias=True, exclude_none=True),
            "tool_use_id": ctx.tool_use_id,
        }

    async def _run_tool_hooks(
        self,
        event: HookEvent,
        hooks: list[ConfiguredHook],
        tool: AnyTool,
        tool_input: BaseModel,
        ctx: ToolContext,
        **fields: Any,
    ) -> HookOutcome:
        # Hooks are commands: they may change files. Checkpoints on both sides keep what they changed apart
        # from what the call changes (the one after names exactly the hooks' changes).
        guard = ctx.get(CHANGE_GUARD)
        warnings = [await guard.before_change(ctx.tool_use_id)] if guard is not None else []
        payload = {**self._tool_fields(tool, tool_input, ctx), **fields}
        outcome = await self.hooks.run(event, ctx.session, payload, hooks=hooks)
        warnings += [await guard.after_hooks(ctx.tool_use_id, event)] if guard is not None else []
        for problem in [*outcome.problems, *outcome.notices, *(w for w in warnings if w)]:
            ctx.logger.warning("%s", problem)
            ctx.progress("hook_problem", problem)
        return outcome

    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision:
        self.refresh()
        names = (tool.name, *tool.aliases)
        hooks = self.hooks.matching("PreToolUse", names)
        outcome = HookOutcome()
        if hooks:  # the payload (a dump of the input) is built only for hooks that will read it
            outcome = await self._run_tool_hooks("PreToolUse", hooks, tool, tool_input, ctx)
        updated: dict[str, Any] | None = None
        if outcome.updated_input is not None:
            try:
                tool_input = tool.input_model.model_validate(outcome.updated_input)
                updated = outcome.updated_input
            except ValidationError as exc:
                problem = (
                    f"a PreToolUse hook's updated_input does not fit {tool.name}'s input, so it was ignored: {exc}"
                )
                ctx.logger.warning("%s", problem)
                ctx.progress("hook_problem", problem)

        if outcome.decision == "deny":
            result = Evaluation("deny", _hook_reason(outcome), "hook", False)
        else:
            result = await self.evaluate(tool, tool_input, ctx)
            if outcome.decision == "allow" and result.behavior == "ask" and result.stage in _HOOK_CAN_ALLOW:
                result = replace(result, behavior="allow", reason=_hook_reason(outcome), stage="hook", suggestions=())
            elif outcome.decision == "ask" and result.behavior == "allow":
                result = replace(result, behavior="ask", reason=_hook_reason(outcome), stage="hook", rule=None)
        if result.behavior == "ask" and result.stage in _PERMISSION_HOOK_CAN_ANSWER:
            result = await self._permission_request(result, names, tool, tool_input, ctx)
        result = self._track_denials(result, ctx.mode)
        if outcome.context and result.behavior != "deny":
            # Kept for after_call; a call that is then refused never gets there, so keep only the latest few.
            self._pending[ctx.tool_use_id] = _Pending(list(outcome.context))
            while len(self._pending) > _MAX_PENDING:
                self._pending.pop(next(iter(self._pending)))
        return Decision(
            behavior=result.behavior,
            reason=result.reason,
            rule=result.rule,
            suggestions=list(result.suggestions),
            offers_accept_edits=result.offers_accept_edits,
            updated_input=updated,
            grounds=result.grounds,
        )

    async def _permission_request(
        self, asked: Evaluation, names: tuple[str, ...], tool: AnyTool, tool_input: BaseModel, ctx: ToolContext
    ) -> Evaluation:
        """PermissionRequest hooks may answer an ask in the person's place (allow or deny); no answer: it is asked."""
        hooks = self.hooks.matching("PermissionRequest", names)
        if not hooks:
            return asked
        outcome = await self._run_tool_hooks("PermissionRequest", hooks, tool, tool_input, ctx, reason=asked.reason)
        if outcome.decision in ("allow", "deny"):
            return replace(asked, behavior=outcome.decision, reason=_hook_reason(outcome), stage="hook", suggestions=())
        return asked

    async def notify(self, ctx: ToolContext, kind: Literal["approval", "review"], tool_name: str, message: str) -> None:
        """Notification hooks: a card waits for the person (the editor's approver calls this while it waits).
        Never raises: a notification that fails is reported, and the card waits as it would anyway."""
        fields = {"kind": kind, "message": message, "tool_name": tool_name, "tool_use_id": ctx.tool_use_id}
        try:
            outcome = await self.hooks.run("Notification", ctx.session, fields)
        except Exception as exc:
            ctx.logger.exception("Notification hooks failed")
            outcome = HookOutcome(problems=[f"the Notification hooks could not run ({exc})"])
        for problem in [*outcome.problems, *outcome.notices]:
            ctx.logger.warning("%s", problem)
            ctx.progress("hook_problem", problem)

    def _track_denials(self, result: Evaluation, mode: PermissionMode) -> Evaluation:
        if not mode_traits(mode).automatic:
            return result
        if result.behavior == "deny":
            self.denials.record_denial(result.reason)
        elif result.behavior == "allow":
            why = self.denials.hand_back_reason()
            if why is not None:
                self.denials.handed_back()
                return Evaluation("ask", why, "hand_back", result.read_only)
            self.denials.record_allow()
        return result

    async def after_call(
        self, tool: AnyTool, tool_input: BaseModel, result: ToolResult, ctx: ToolContext
    ) -> ToolResult:
        """PostToolUse hooks (PostToolUseFailure for a call that failed); context from them (and from PreToolUse
        hooks) is appended for the model."""
        pending = self._pending.pop(ctx.tool_use_id, None)
        context = list(pending.context) if pending else []
        event: HookEvent = "PostToolUseFailure" if result.is_error else "PostToolUse"
        hooks = self.hooks.matching(event, (tool.name, *tool.aliases))
        if hooks:
            fields: dict[str, Any] = (
                {"error": result.text()}
                if result.is_error
                else {"tool_result": {"content": result.text(), "is_error": result.is_error}}
            )
            context += (await self._run_tool_hooks(event, hooks, tool, tool_input, ctx, **fields)).context
        if not context:
            return result
        note = "\n".join(f"[hook] {text.strip()}" for text in context)
        if isinstance(result.content, str):
            return result.model_copy(update={"content": f"{result.content}\n\n{note}"})
        return result.model_copy(update={"content": [*result.content, TextBlock(text=note)]})

    # --- what the settings say -----------------------------------------------------------------------------
    def _book_with_allow(self, rule: str) -> RuleBook:
        """A copy of the rule book with one more session allow rule: the live book is never touched, so a call
        decided meanwhile sees only the rules really in force."""
        parse_rule(rule)  # RuleError: the caller says why
        book = replace(self.book, entries=list(self.book.entries), problems=list(self.book.problems))
        add_rules(book, RuleSource("session", None, self.workspace), {"allow": [rule]}, self.home)
        return book

    def settings_file(self, scope: RuleScope) -> Path | None:
        return None if scope == "session" else self.book.files[scope]

    def guards_reads(self) -> bool:
        return any(
            e.rule.tool == "Read" and e.rule.kind in ("path", "tool")
            for behavior in ("deny", "ask")
            for e in self.book.of(behavior)
        )

    def read_denied(self, path: Path) -> str | None:
        """The deny (or ask) rule that keeps `path` from being read, if any. For tools that read whole trees
        (Grep, Glob): they should leave such files out rather than show what a rule protects."""
        forms = resolved_forms(path)
        for behavior in ("deny", "ask"):
            for entry in self.book.of(behavior):
                guards = entry.rule.tool == "Read" and entry.rule.kind in ("path", "tool")
                if guards and any(entry.matches_path(form) for form in forms):
                    return entry.rule.text
        return None

    def domain_verdict(self, host: str) -> DomainVerdict:
        """What the WebFetch rules say about `host` (WebFetch asks before every redirect hop and address)."""
        return domain_verdict(self.book, host)


def _hook_reason(outcome: HookOutcome) -> str:
    """A hook's decision in words, naming the hook (the person sees which command decided, and why)."""
    return f"{outcome.reason} (decided by the {outcome.decided_by})"


__all__ = ["CheckResult", "PermissionEngine", "code_execution_warning"]
