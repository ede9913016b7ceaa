"""The permission vocabulary the runner speaks. The engine that decides lives in `toolgate.permissions`.

A tool's own `check_permissions` returns a `PermissionCheck`; the session's `PermissionPolicy` turns it
(plus rules, modes and safety checks) into a `Decision`; an "ask" decision goes to the session's
`Approver` (a human in the editor, or a fixed answer in a headless run).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from toolgate.core.context import ToolContext
    from toolgate.core.messages import ToolResult
    from toolgate.core.tool import AnyTool


class PermissionMode(StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    BYPASS = "bypassPermissions"


class ModeTraits(BaseModel):
    """What one permission mode means. The ladder, rule coverage, workspace trust, WebFetch and the extension (its
    list of modes is generated from `MODE_TRAITS` with the protocol) read these instead of naming modes."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    mode: PermissionMode
    label: str = Field(description="The mode's name as a person reads it.")
    summary: str = Field(description="What the mode does, in one line.")
    automatic: bool = Field(
        default=False,
        description=(
            "Nobody approves each call: allow rules that let any code run are not honoured, and repeated automatic "
            "denials hand the decision back to the person."
        ),
    )
    widening: bool = Field(
        default=False,
        description="It lets through calls that default mode asks about, so an untrusted workspace may not choose it.",
    )
    allows_every_call: bool = Field(
        default=False, description="Every call that passes the safety checks runs without asking."
    )
    allows_file_edits: bool = Field(
        default=False,
        description="File changes inside the working directories (and commands that only make them) run unasked.",
    )
    read_only: bool = Field(
        default=False,
        description=(
            "Planning: only read-only calls run without asking; allow rules count only for read-only calls, the "
            "sandbox does not allow on its own, and WebFetch fetches only from hosts an allow rule names."
        ),
    )
    offers_accept_edits: bool = Field(
        default=False, description="An approval may offer to answer by switching to acceptEdits."
    )
    shared_default: bool = Field(
        default=True, description="A project's checked-in settings may make it the default mode."
    )


# The one table of modes, in the order a person is offered them. Constructed, not validated: the values are
# literals here, and validating would build the model's validator on every start (before initialize is answered).
MODE_TRAITS: dict[PermissionMode, ModeTraits] = {
    t.mode: t
    for t in (
        ModeTraits.model_construct(
            mode=PermissionMode.DEFAULT,
            label="Ask before changes",
            summary="Asks before anything that is not allowed.",
            offers_accept_edits=True,
        ),
        ModeTraits.model_construct(
            mode=PermissionMode.ACCEPT_EDITS,
            label="Accept edits",
            summary="File changes inside the working directories run without asking.",
            automatic=True,
            widening=True,
            allows_file_edits=True,
        ),
        ModeTraits.model_construct(
            mode=PermissionMode.PLAN,
            label="Plan (read-only)",
            summary="Only reads run without asking: explore and plan.",
            read_only=True,
        ),
        ModeTraits.model_construct(
            mode=PermissionMode.BYPASS,
            label="Bypass permissions",
            summary="Everything that passes the safety checks runs without asking.",
            automatic=True,
            widening=True,
            allows_every_call=True,
            shared_default=False,  # a checked-in file must not switch every check off for whoever clones it
        ),
    )
}


def mode_traits(mode: PermissionMode) -> ModeTraits:
    return MODE_TRAITS[mode]


RuleScope = Literal["session", "local", "project", "user"]

# Why a call was allowed, carried from the decision to the tool that runs it (`ToolContext.allowed_because`):
# "read_only" (the classifier's read-only verdict allowed it: the Bash tool then runs it where nothing is
# writable, so a wrong verdict fails instead of changing files), "allow_rule", "mode" (acceptEdits),
# "bypass", "sandbox" (the sandbox's autoAllow), "tool" (the tool's own check), "hook", "person" (approved).
Grounds = Literal["read_only", "allow_rule", "mode", "bypass", "sandbox", "tool", "hook", "person"]


class RuleSuggestion(BaseModel):
    """A rule the UI can offer as "always allow", and the scope it would be saved in."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    rule: str
    scope: RuleScope = "local"


class PermissionCheck(BaseModel):
    """A tool's own opinion about one call. `passthrough` means "no opinion: let the policy decide"."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    behavior: Literal["allow", "deny", "ask", "passthrough"]
    reason: str = ""
    suggestions: list[RuleSuggestion] = Field(default_factory=list)

    @classmethod
    def passthrough(cls) -> PermissionCheck:
        return cls(behavior="passthrough")


class Decision(BaseModel):
    """The policy's verdict. Every decision carries a reason a person (and a model) can read."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    behavior: Literal["allow", "deny", "ask"]
    reason: str
    rule: str | None = None  # the rule that decided, if one did
    suggestions: list[RuleSuggestion] = Field(default_factory=list)
    offers_accept_edits: bool = False  # an ask that acceptEdits mode would allow
    updated_input: dict[str, Any] | None = None  # e.g. a hook rewrote the input
    grounds: Grounds | None = None  # why it allows (None: it does not, or the policy does not say)


class SubagentRef(BaseModel):
    """The child agent a request comes from (the Agent tool): the editor names it on the card and marks the waiting
    call in that Agent call's card. camelCase on the wire like the request around it (wire models dump by alias)."""

    model_config = ConfigDict(extra="forbid", defer_build=True, alias_generator=to_camel, populate_by_name=True)

    task_id: str = Field(description="The parent's Agent tool_use id: the call whose child asks.")
    agent_type: str
    description: str = Field(description="The Agent call's short description of the task.")

    @property
    def name(self) -> str:
        """How a person is told which child asks: "explore: find the tests"."""
        return f"{self.agent_type}: {self.description}"


class ApprovalRequest(BaseModel):
    """The approval card: one call waiting for a person's yes or no. Its fields are defined here only; the
    sidecar's wire model (`ApprovalParams`) and the extension's generated type derive from this class."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    session_id: str
    tool_use_id: str
    tool_name: str
    input: dict[str, Any]
    summary: str = Field(description="One line a person can read.")
    reason: str = Field(description="Why approval is needed.")
    suggestions: list[RuleSuggestion] = Field(
        default_factory=list, description="Rules the UI may offer as 'always allow'."
    )
    offers_accept_edits: bool = Field(default=False, description="acceptEdits mode would allow this call.")
    subagent: SubagentRef | None = Field(
        default=None, description="The child agent that asks (null: the session's own agent or a direct call)."
    )

    def headline(self) -> str:
        """The summary, naming the child that asks when one does: for anything that shows the request as text."""
        return f"{self.subagent.name} asks: {self.summary}" if self.subagent else self.summary


class ApprovalAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    decision: Literal["allow", "deny"]
    feedback: str | None = None
    # Why a denial happened when no human decided: nobody can be asked (headless), or the asking failed.
    reason: Literal["user", "non_interactive", "unavailable"] = "user"


class FileProposal(BaseModel):
    """One file a call proposes to change: `original` None = a new file; `proposed` None = a deletion."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    original: str | None
    proposed: str | None


class ReviewRequest(BaseModel):
    """A diff review: the human sees original vs proposed for every file and may edit the proposals. Its fields
    are defined here only; the sidecar's wire model (`DiffReviewParams`) derives from this class."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    session_id: str
    tool_use_id: str
    tool_name: str
    title: str
    reason: str = Field(description="Why it is reviewed: the approval reason, or that edits are always reviewed.")
    files: list[FileProposal] = Field(description="original null: a new file; proposed null: a deletion.")
    suggestions: list[RuleSuggestion] = Field(
        default_factory=list, description="Rules the UI may offer as 'always allow'."
    )
    offers_accept_edits: bool = Field(default=False, description="acceptEdits mode would allow these changes.")


class ReviewedFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    content: str | None  # the final text the human accepted (None: the deletion stands)
    skipped: bool = Field(
        default=False,
        description="The person left this file as it is (a new file is not created); content is then ignored.",
    )


class ReviewNote(BaseModel):
    """A comment the person left on a line of a proposal (1-based), sent to the model with the decision."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str
    line: int = Field(ge=1)
    text: str = Field(max_length=20_000)


class ReviewAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    decision: Literal["accept", "reject"]
    notes: list[ReviewNote] = Field(default_factory=list)
    files: list[ReviewedFile] | None = None  # final contents; absent = accepted as proposed
    feedback: str | None = None
    reason: Literal["user", "non_interactive", "unavailable"] = "user"


class PermissionPolicy(Protocol):
    async def decide(self, tool: AnyTool, tool_input: BaseModel, ctx: ToolContext) -> Decision: ...


@runtime_checkable
class AfterCallPolicy(Protocol):
    """Optional: a policy that also sees each finished call (PostToolUse hooks) and may add to its result."""

    async def after_call(
        self, tool: AnyTool, tool_input: BaseModel, result: ToolResult, ctx: ToolContext
    ) -> ToolResult: ...


@runtime_checkable
class ReadGuard(Protocol):
    """Implemented by policies with rules that forbid reading some paths. Tools that read whole trees (Glob,
    Grep) leave such files out of what they show, instead of revealing what a rule protects."""

    def guards_reads(self) -> bool:
        """Whether any rule forbids (or asks before) reading some path: when not, nothing needs checking."""
        ...

    def read_denied(self, path: Path) -> str | None:
        """The rule that keeps `path` from being read freely, or None."""
        ...


@dataclass(frozen=True, slots=True)
class DomainVerdict:
    """What the WebFetch rules say about one host: the strongest rule covering it (deny, then ask, then allow;
    None when no rule does), and an allow rule that names the host exactly (no wildcard), which is what a
    fetch from a loopback or private address needs."""

    behavior: Literal["allow", "ask", "deny"] | None = None
    rule: str | None = None
    named_exactly: str | None = None


@runtime_checkable
class FetchGuard(Protocol):
    """Implemented by policies with WebFetch domain rules. WebFetch asks it about every redirect hop and every
    resolved address; a policy without it allows no redirect to another host and no non-public address."""

    def domain_verdict(self, host: str) -> DomainVerdict: ...


class Approver(Protocol):
    """Who answers "ask": a human in the editor, or a fixed answer in a headless run."""

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer: ...

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer: ...


class NonInteractiveApprover:
    """Nobody can be asked in a headless run: every "ask" is answered "no", and the result says why.

    Used by the headless CLI commands, the benchmarks and the tests: wherever no human is there to answer."""

    async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
        return ApprovalAnswer(decision="deny", reason="non_interactive")

    async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
        return ReviewAnswer(decision="reject", reason="non_interactive")
