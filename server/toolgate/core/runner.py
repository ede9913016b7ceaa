"""Run one tool call through the six steps, and make sure every exit yields exactly one tool_result.

    lookup by name/alias → schema check → state check (validate) → permission → call → result mapping

Each failure names its kind (see `core.errors`). Unexpected exceptions give the model their message only;
the traceback goes to the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import ValidationError

from toolgate.core.change_followers import CHANGE_FOLLOWER, FollowedCall, with_note
from toolgate.core.change_guard import CHANGE_GUARD, ChangeGuard, with_warning
from toolgate.core.child_env import own_secret_values
from toolgate.core.context import ReviewedContent, ToolContext
from toolgate.core.errors import ErrorKind, ToolError, format_error
from toolgate.core.input_errors import describe_validation_error
from toolgate.core.messages import ContentBlock, TextBlock, ToolResult, ToolResultContent, ToolUse
from toolgate.core.output_store import OUTPUT_STORE, spill_oversized
from toolgate.core.paths import display_path
from toolgate.core.permission import AfterCallPolicy, ApprovalRequest, Decision, FileProposal, ReviewRequest
from toolgate.core.registry import ToolRegistry
from toolgate.core.tool import AnyTool, DescribeContext, Rendered, ToolInput
from toolgate.core.tool_session import ToolSession
from toolgate.text.redact import redact
from toolgate.text.review_outcome import notes_text


@dataclass(slots=True)
class PreparedCall:
    """A tool_use after lookup and schema check: either ready to run, or already answered with an error."""

    use: ToolUse
    tool: AnyTool | None = None
    tool_input: ToolInput | None = None
    error: ToolResult | None = None

    @property
    def concurrency_safe(self) -> bool:
        """Unknown tools, bad input and classifiers that throw all count as unsafe (they run alone)."""
        if self.tool is None or self.tool_input is None:
            return False
        try:
            return bool(self.tool.is_concurrency_safe(self.tool_input))
        except Exception:
            return False


def error_result(use_id: str, kind: ErrorKind, message: str) -> ToolResult:
    return ToolResult(tool_use_id=use_id, content=format_error(kind, message), is_error=True)


def _looks_only(tool: AnyTool, tool_input: ToolInput) -> bool | Exception:
    """`tool.is_read_only(tool_input)`, or the exception it raised (each step that asks treats that its own way)."""
    try:
        return bool(tool.is_read_only(tool_input))
    except Exception as exc:
        return exc


def _is_empty(content: ToolResultContent) -> bool:
    if isinstance(content, str):
        return not content.strip()
    return all(isinstance(b, TextBlock) and not b.text.strip() for b in content)


def _redacted(content: ToolResultContent, where: str) -> ToolResultContent:
    """`content` with secrets taken out (text/redact.py), and a note saying so. Every result passes here, so
    no tool can hand the model a key: not one printed by a command, nor one read from a file."""
    known = own_secret_values()
    if isinstance(content, str):
        done = redact(content, known)
        note = done.note(where)
        return done.text if note is None else f"{done.text}\n\n{note}"
    blocks: list[ContentBlock] = []
    for index, block in enumerate(content):
        if isinstance(block, TextBlock):
            done = redact(block.text, known)
            note = done.note(f"{where} (text block {index + 1})")
            block = block if note is None else TextBlock(text=f"{done.text}\n\n{note}")
        blocks.append(block)
    return blocks


class ToolRunner:
    def __init__(self, registry: ToolRegistry, session: ToolSession) -> None:
        self.registry = registry
        self.session = session

    def describe_context(self) -> DescribeContext:
        return DescribeContext(
            tool_names=self.registry.name_set,
            mode=self.session.mode,
            workspace=self.session.workspace,
        )

    def new_context(self, tool_use_id: str) -> ToolContext:
        return ToolContext(
            session=self.session,
            tool_use_id=tool_use_id,
            deps=self.session.deps.for_call(),
            logger=self.session.logger,
        )

    # --- steps 1-2: lookup and schema --------------------------------------------------------------------
    def prepare(self, use: ToolUse) -> PreparedCall:
        tool = self.registry.get(use.name)
        if tool is None:
            available = ", ".join(self.registry.names) or "(none)"
            return PreparedCall(
                use,
                error=error_result(
                    use.id,
                    ErrorKind.UNKNOWN_TOOL,
                    f"There is no tool named {use.name!r}. The tools available are: {available}. "
                    "Call one of these by its exact name.",
                ),
            )
        parsed = self._parse(tool, use.id, use.input)
        if isinstance(parsed, ToolResult):
            return PreparedCall(use, tool=tool, error=parsed)
        return PreparedCall(use, tool=tool, tool_input=parsed)

    def _parse(self, tool: AnyTool, use_id: str, raw: Any) -> ToolInput | ToolResult:
        if not isinstance(raw, dict):
            return error_result(
                use_id,
                ErrorKind.INVALID_INPUT,
                f"The input for {tool.name} must be a JSON object of named parameters, "
                f'but it was {type(raw).__name__}. Send an object such as {{"param": value}}.',
            )
        try:
            return tool.input_model.model_validate(raw)
        except ValidationError as exc:
            accepted = sorted((field.alias or name) for name, field in tool.input_model.model_fields.items())
            return error_result(use_id, ErrorKind.INVALID_INPUT, describe_validation_error(tool.name, exc, accepted))

    # --- steps 3-6 ----------------------------------------------------------------------------------------
    async def execute(self, prepared: PreparedCall, ctx: ToolContext) -> ToolResult:
        if prepared.error is not None:
            return prepared.error
        assert prepared.tool is not None and prepared.tool_input is not None
        try:
            return await self._steps(prepared.tool, prepared.tool_input, ctx)
        except Exception as exc:
            # A bug between the steps (a proposal, a summary, an approver) must still end in one result for
            # this call, and must not take the other calls of the turn down with it.
            ctx.logger.exception("%s: the pipeline raised", prepared.tool.name)
            return error_result(
                ctx.tool_use_id,
                ErrorKind.FAILED,
                f"toolgate failed while handling this {prepared.tool.name} call ({type(exc).__name__}: {exc}). "
                "It may not have run; check before repeating it.",
            )

    async def _steps(self, tool: AnyTool, tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
        use_id = ctx.tool_use_id

        try:
            await tool.validate(tool_input, ctx)
        except ToolError as exc:
            return error_result(use_id, exc.kind, exc.message)
        except Exception as exc:
            ctx.logger.exception("%s: validate raised", tool.name)
            return error_result(use_id, ErrorKind.FAILED, f"{tool.name} failed while checking its input: {exc}")

        gate = await self._permission(tool, tool_input, ctx)
        if isinstance(gate, ToolResult):
            return gate
        tool_input = gate

        # Asked once for the checkpoint and the change follower alike (a classifier may parse a command).
        looks_only = _looks_only(tool, tool_input)
        guard = ctx.get(CHANGE_GUARD)
        warning = await self._before_change(tool, looks_only, guard, ctx)
        followed = await self._follow(tool, tool_input, looks_only, ctx)
        result = await self._call(tool, tool_input, ctx)
        after = await guard.after_change(ctx.tool_use_id) if guard is not None else None
        for note in (warning, after):
            if note is not None:
                result = with_warning(result, note)
        result = await self._after_call(tool, tool_input, result, ctx)
        return await self._followed_up(followed, result, ctx)

    async def _follow(
        self, tool: AnyTool, tool_input: ToolInput, looks_only: bool | Exception, ctx: ToolContext
    ) -> FollowedCall | None:
        """The session's change follower (the editor's problems step) looks before a call that may change files;
        not after a classifier that threw (`looks_only` is its exception)."""
        follower = ctx.get(CHANGE_FOLLOWER)
        if follower is None:
            return None
        if isinstance(looks_only, Exception):
            ctx.logger.error("%s: the change follower raised before the call", tool.name, exc_info=looks_only)
            return None
        if looks_only:
            return None
        try:
            return await follower.before(tool, tool_input, ctx)
        except Exception:
            ctx.logger.exception("%s: the change follower raised before the call", tool.name)
            return None

    async def _followed_up(self, followed: FollowedCall | None, result: ToolResult, ctx: ToolContext) -> ToolResult:
        """Its note ends the result (after the hooks: a formatter a hook ran is part of what the editor checks)."""
        if followed is None:
            return result
        # Interrupted while the follower waits (the editor's language server): the call did run, and says so.
        ctx.partial_result = with_note(
            result, "(The turn was interrupted while the editor checked this change; the change itself was made.)"
        ).content
        try:
            note = await followed.after(result)
        except Exception:
            ctx.logger.exception("the change follower raised after the call")
            return result
        return result if note is None else with_note(result, note)

    async def _before_change(
        self, tool: AnyTool, looks_only: bool | Exception, guard: ChangeGuard | None, ctx: ToolContext
    ) -> str | None:
        """A call that may change files is checkpointed first (when a guard is wired in); a classifier that
        throws counts as "may change files"."""
        if looks_only is True:
            return None
        if guard is None:
            return None
        try:
            return await guard.before_change(ctx.tool_use_id)
        except Exception as exc:
            ctx.logger.exception("%s: the checkpoint before the call raised", tool.name)
            return f"this change cannot be rewound: the checkpoint before it failed ({exc})"

    async def _call(self, tool: AnyTool, tool_input: ToolInput, ctx: ToolContext) -> ToolResult:
        use_id = ctx.tool_use_id
        try:
            data = await tool.call(tool_input, ctx)
            mapped = tool.to_result(data, ctx)
        except ToolError as exc:
            return error_result(use_id, exc.kind, exc.message)
        except Exception as exc:
            ctx.logger.exception("%s: call raised", tool.name)
            return error_result(use_id, ErrorKind.FAILED, f"{tool.name} failed: {exc or type(exc).__name__}")

        rendered = mapped if isinstance(mapped, Rendered) else Rendered(mapped)
        content = _redacted(rendered.content, f"this {tool.name} result")
        if _is_empty(content):
            content = f"({tool.name} finished with no output.)"
        if ctx.review_notes and isinstance(content, str):
            content += f"\n{ctx.review_notes}"
        elif tool.max_result_chars is not None:
            content = await spill_oversized(
                content,
                limit=tool.max_result_chars,
                store=lambda: ctx.get(OUTPUT_STORE),
                source=f"{tool.name} {use_id}",
                readers=self.registry.name_set,
            )
        return ToolResult(tool_use_id=use_id, content=content, is_error=rendered.is_error)

    async def _after_call(
        self, tool: AnyTool, tool_input: ToolInput, result: ToolResult, ctx: ToolContext
    ) -> ToolResult:
        """A policy that watches finished calls (PostToolUse hooks) may add to the result, never replace it."""
        policy = self.session.policy
        # What `isinstance(policy, AfterCallPolicy)` checks, without a runtime Protocol check on every call
        # (that walks the protocol's attributes each time).
        if getattr(policy, "after_call", None) is None:
            return result
        try:
            return await cast(AfterCallPolicy, policy).after_call(tool, tool_input, result, ctx)
        except Exception:
            ctx.logger.exception("%s: after_call raised", tool.name)
            return result

    async def _permission(self, tool: AnyTool, tool_input: ToolInput, ctx: ToolContext) -> ToolInput | ToolResult:
        use_id = ctx.tool_use_id
        self._pin(tool, tool_input, ctx)
        try:
            decision = await self.session.policy.decide(tool, tool_input, ctx)
        except Exception as exc:  # a broken check must never mean "allowed"
            ctx.logger.exception("%s: permission check raised", tool.name)
            decision = Decision(behavior="ask", reason=f"the permission check could not decide ({exc})")

        if decision.behavior == "deny":
            return error_result(
                use_id,
                ErrorKind.PERMISSION,
                f"Permission denied: {decision.reason}"
                + (f" (rule `{decision.rule}`)" if decision.rule else "")
                + ". Do not retry this call as it is; choose another way or ask the user to change the rules.",
            )
        if decision.updated_input is not None:
            reparsed = self._parse(tool, use_id, decision.updated_input)
            if isinstance(reparsed, ToolResult):
                return reparsed
            tool_input = reparsed
            self._pin(tool, tool_input, ctx)

        wants_review = decision.behavior == "ask" or self.session.review_edits == "always"
        try:
            proposals = await tool.propose(tool_input, ctx) if wants_review else None
        except ToolError as exc:  # e.g. the file changed between the state check and the proposal
            return error_result(use_id, exc.kind, exc.message)
        if proposals and self.session.review_edits == "after" and decision.offers_accept_edits:
            # Reviewed after it applies (the changes bar's Keep / Undo, over its checkpoints): an edit that only
            # asked because it changes files inside the working directories goes ahead now, and the model is not
            # held. Anything else that asks (a safety check, an ask rule, a path outside) is still reviewed first.
            ctx.allowed_because = "mode"
            return tool_input
        if proposals:
            refusal = await self._review(tool, tool_input, decision, proposals, ctx)
            if refusal is not None:
                return refusal
        elif decision.behavior == "ask":
            request = ApprovalRequest(
                session_id=self.session.id,
                tool_use_id=use_id,
                tool_name=tool.name,
                input=tool_input.model_dump(by_alias=True, exclude_none=True),
                summary=tool.summary(tool_input, self.session.workspace),
                reason=decision.reason,
                suggestions=decision.suggestions,
                offers_accept_edits=decision.offers_accept_edits,
            )
            answer = await self.session.decisions.ask(self.session.approver, request, ctx)
            if answer.decision != "allow":
                return error_result(
                    use_id, ErrorKind.PERMISSION, _refusal_text(decision, answer.reason, answer.feedback)
                )
        ctx.allowed_because = decision.grounds if decision.behavior == "allow" else "person"
        return tool_input

    @staticmethod
    def _pin(tool: AnyTool, tool_input: ToolInput, ctx: ToolContext) -> None:
        """Pin where the call's paths really are as the decision is made (`ToolContext.pinned`): the file tools
        then read and write there or nowhere. A tool whose paths cannot be listed pins none; the decision judges
        (and refuses) such input on its own."""
        try:
            paths = tool.paths(tool_input, ctx)
        except Exception:
            paths = ()
        ctx.pin_paths(paths)

    async def _review(
        self,
        tool: AnyTool,
        tool_input: ToolInput,
        decision: Decision,
        proposals: list[FileProposal],
        ctx: ToolContext,
    ) -> ToolResult | None:
        """The diff review is the approval: one prompt, not two. Returns a refusal, or None to go ahead."""
        request = ReviewRequest(
            session_id=self.session.id,
            tool_use_id=ctx.tool_use_id,
            tool_name=tool.name,
            title=f"{tool.name}: {tool.summary(tool_input, self.session.workspace)}",
            reason=decision.reason if decision.behavior == "ask" else "file changes are reviewed before they apply",
            files=proposals,
            suggestions=decision.suggestions if decision.behavior == "ask" else [],
            offers_accept_edits=decision.behavior == "ask" and decision.offers_accept_edits,
        )
        answer = await self.session.decisions.review(self.session.approver, request, ctx)
        workspace = self.session.workspace
        notes = notes_text(
            [(display_path(Path(n.path), workspace), n.line, n.text) for n in answer.notes], answer.decision
        )
        if answer.decision != "accept":
            if decision.behavior == "allow" and answer.reason != "user":
                return None  # nobody could review an already-allowed edit: it stands as allowed
            return error_result(
                ctx.tool_use_id,
                ErrorKind.PERMISSION,
                _refusal_text(decision, answer.reason, answer.feedback, review=True) + (f"\n{notes}" if notes else ""),
            )
        ctx.review_notes = notes
        final = {f.path: f.content for f in answer.files or []}
        skipped = {f.path for f in answer.files or [] if f.skipped}
        ctx.reviewed = [
            ReviewedContent(
                path=Path(p.path),
                content=final.get(p.path, p.proposed),
                proposed=p.proposed,
                user_modified=p.path in final and final[p.path] != p.proposed,
                original=p.original,
                skipped=p.path in skipped,
            )
            for p in proposals
        ]
        return None


def _refusal_text(
    decision: Decision,
    reason: Literal["user", "non_interactive", "unavailable"],
    feedback: str | None,
    review: bool = False,
) -> str:
    declined = (
        "The user rejected the proposed change, so nothing was written."
        if review
        else "The user declined this call, so it did not run."
    )
    if feedback:
        return f"{declined} The user said: {feedback.strip()}\nTake that into account before doing anything else."
    if reason == "non_interactive":
        rules = ", ".join(f"--allow '{s.rule}'" for s in decision.suggestions[:3])
        how = f" To let it run, start the session with a rule that grants it ({rules})." if rules else ""
        if decision.offers_accept_edits:
            how += " `--permission-mode acceptEdits` would let it run too (file changes inside the workspace)."
        return (
            f"This call needs approval ({decision.reason}), and this session is non-interactive, "
            f"so nobody could approve it and it did not run.{how} Otherwise, find a way that needs no approval."
        )
    if reason == "unavailable":
        return (
            f"This call needs approval ({decision.reason}), but no answer came from the editor (it disconnected, "
            "the request was cancelled, or nobody answered before the approval timeout ran out), so it did not run. "
            "If it is still needed, say so in your reply and let the user decide."
        )
    return f"{declined} Do not retry it unchanged: stop and ask the user how they want to proceed."
