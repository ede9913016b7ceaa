"""Assemble a working tool runtime (session + registry + runner + orchestrator) from plain options.

The headless CLI, the sidecar and the tests all build sessions here, so they all get the same tools and
the same permission policy. The runtime also answers "what would happen to this call?" (`check`): it owns
the runner that prepares the call, and the engine (`permissions/decide.py`) decides it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolgate.checkpoints.session import CHECKPOINTS, SessionCheckpoints, attach_checkpoints
from toolgate.core.child_env import PASS_THROUGH
from toolgate.core.containment import CONTAINMENT
from toolgate.core.deps import Dep
from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import Orchestrator
from toolgate.core.output_store import OUTPUT_STORE, OutputStore
from toolgate.core.permission import Approver, PermissionMode, PermissionPolicy
from toolgate.core.registry import ToolRegistry
from toolgate.core.runner import ToolRunner
from toolgate.core.tool import AnyTool
from toolgate.core.tool_session import ProgressListener, ProgressListeners, ReviewEdits, ToolSession
from toolgate.mcp.session import McpOptions, SessionMcp, attach_mcp
from toolgate.permissions.decide import CheckResult, PermissionEngine
from toolgate.permissions.ladder import Evaluation
from toolgate.permissions.rules import Behavior
from toolgate.sandbox.runtime import SANDBOX, Sandbox
from toolgate.sandbox.settings import SandboxRequest, load_sandbox_settings
from toolgate.session_files import TRANSCRIPT_FILE
from toolgate.tools import builtin_tools

_CHECK_ID = "permission-check"
_TAGS = re.compile(r"</?tool_error[^>]*>")


@dataclass(eq=False)
class Runtime:
    session: ToolSession
    registry: ToolRegistry
    runner: ToolRunner
    orchestrator: Orchestrator

    @property
    def permissions(self) -> PermissionEngine:
        """The session's permission engine (rules, modes, `check`); absent only when a custom policy was given."""
        policy = self.session.policy
        if not isinstance(policy, PermissionEngine):
            raise LookupError("this runtime was built with a custom permission policy, not the engine")
        return policy

    def attach_mcp(self, options: McpOptions) -> SessionMcp:
        """Give this session MCP servers (`toolgate.mcp.session`), started by `ensure_started`."""
        engine = self.session.policy if isinstance(self.session.policy, PermissionEngine) else None
        return attach_mcp(self.session, self.registry, engine, options)

    async def evaluate_call(self, tool_name: str, tool_input: Any, *, with_allow: str | None = None) -> Evaluation:
        """The ladder's full answer (stage, suggestions) for a call given by name, running nothing. `with_allow`:
        as if that allow rule were in force too (a rule not yet saved)."""
        engine = self.permissions
        engine.refresh()
        prepared = self.runner.prepare(ToolUse(id=_CHECK_ID, name=tool_name, input=tool_input))
        if prepared.error is not None or prepared.tool is None or prepared.tool_input is None:
            text = prepared.error.text() if prepared.error is not None else "the call cannot be prepared"
            reason = "the call would be refused before any permission check: " + _TAGS.sub("", text).strip()
            return Evaluation("deny", reason, "tool", False)
        ctx = self.runner.new_context(_CHECK_ID)
        try:
            return await engine.evaluate(prepared.tool, prepared.tool_input, ctx, with_allow=with_allow)
        finally:
            await ctx.deps.aclose()

    async def check(self, tool_name: str, tool_input: Any, *, with_allow: str | None = None) -> CheckResult:
        """What the engine would decide for this call, without hooks and without running anything."""
        result = await self.evaluate_call(tool_name, tool_input, with_allow=with_allow)
        return CheckResult(decision=result.behavior, read_only=result.read_only, reason=result.reason, rule=result.rule)

    @property
    def checkpoints(self) -> SessionCheckpoints | None:
        """The session's checkpoints, when it has them (see toolgate.checkpoints)."""
        return self.session.deps.get(CHECKPOINTS)

    async def aclose(self) -> None:
        await self.session.aclose()


@dataclass(frozen=True, slots=True)
class RuntimeOptions:
    """How to build a runtime. Every field defaults to what a plain headless run wants.

    `mode` None: the settings files' defaultMode, else default. `rules` are command-line rules (`--allow` and
    friends); `settings_files` are extra files (`--settings`); `read_settings` False ignores the user's,
    project's and local settings files (tests, and callers that pass every rule themselves).
    `trust_workspace`: whether the workspace's own settings files may widen permissions (None: as the user's
    trustedWorkspaces say; see permissions/trust.py). `policy`: a custom permission policy instead of the
    engine. `data_dir`: the session's directory (its output store persists there); None: temporary.
    `progress`: who hears live output (see ToolSession.progress); `dependencies`: values that replace the
    default ones (the editor's open documents, for example). `sandbox`: None runs Bash without a sandbox and
    reads no sandbox settings (library callers, tests); otherwise as the request and the settings files say.
    `checkpoints_root`: the data root whose checkpoint store records the workspace before each turn and each
    call that may change files (None: no checkpoints). `mcp`: where the session's MCP servers come from; they
    start with its first chat turn (toolgate.mcp.session). None: no MCP servers.
    """

    mode: PermissionMode | None = None
    additional_dirs: Sequence[Path] = ()
    policy: PermissionPolicy | None = None
    rules: Mapping[Behavior, Sequence[str]] | None = None
    settings_files: Sequence[Path] = ()
    read_settings: bool = True
    trust_workspace: bool | None = None
    tools: Sequence[AnyTool] | None = None
    session_id: str | None = None
    data_dir: Path | None = None
    max_concurrency: int | None = None
    review_edits: ReviewEdits = "when_asking"
    progress: Sequence[ProgressListener] = ()
    dependencies: Mapping[Dep[Any], Any] = field(default_factory=dict)
    sandbox: SandboxRequest | None = None
    checkpoints_root: Path | None = None
    mcp: McpOptions | None = None


def build_runtime(workspace: Path, approver: Approver, options: RuntimeOptions | None = None) -> Runtime:
    """A runtime for `workspace` whose questions go to `approver`, built as `options` say."""
    o = options or RuntimeOptions()
    policy = o.policy
    if policy is None:
        policy = PermissionEngine(
            workspace,
            cli_rules=o.rules,
            settings_files=o.settings_files,
            read_settings_files=o.read_settings,
            trust_workspace=o.trust_workspace,
        )
    engine = policy if isinstance(policy, PermissionEngine) else None
    dirs = [*o.additional_dirs, *(engine.book.additional_dirs if engine else ())]
    session = ToolSession(
        workspace=workspace,
        policy=policy,
        approver=approver,
        mode=o.mode or (engine.book.default_mode if engine else None) or PermissionMode.DEFAULT,
        additional_dirs=list(dict.fromkeys(dirs)),
        data_dir=o.data_dir,
        review_edits=o.review_edits,
        progress=ProgressListeners(o.progress),
    )
    if o.session_id is not None:
        session.id = o.session_id
    if o.data_dir is not None:
        outputs = o.data_dir / "outputs"
        session.deps.override_factory(OUTPUT_STORE, lambda _r: OutputStore(outputs, persistent=True))
    # The ladder asks CONTAINMENT (core), not the sandbox, whether a call runs contained: the sandbox sits above it.
    session.deps.override_factory(CONTAINMENT, lambda r: r.get(SANDBOX))
    for dep, value in o.dependencies.items():
        session.deps.override(dep, value)
    if o.sandbox is not None:
        files = engine.book.files if engine is not None and o.read_settings else {}
        flags = tuple(engine.book.flag_files) if engine is not None else ()
        chosen, problems = load_sandbox_settings(files, flags, o.sandbox)
        session.deps.override(SANDBOX, Sandbox(chosen, problems=problems))
    if o.checkpoints_root is not None:
        # A session directory holds its transcript, whose place each turn checkpoint records.
        transcript = o.data_dir / TRANSCRIPT_FILE if o.data_dir is not None else None
        attach_checkpoints(session, o.checkpoints_root, transcript=transcript)
    registry = ToolRegistry(builtin_tools() if o.tools is None else o.tools)
    runner = ToolRunner(registry, session)
    if engine is not None:
        # Read on every call: the rule book is rebuilt when a settings file changes.
        session.deps.override_factory(PASS_THROUGH, lambda _r: engine.book.pass_through)
    runtime = Runtime(session, registry, runner, Orchestrator(runner, o.max_concurrency))
    if o.mcp is not None:
        runtime.attach_mcp(o.mcp)
    return runtime
