"""Assemble a working tool runtime (session + registry + runner + orchestrator) from plain options.

The headless CLI, the sidecar and the tests all build sessions here, so they all get the same tools and
the same permission policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolgate.core.messages import ToolResult, ToolUse
from toolgate.core.orchestrator import CancelToken, Orchestrator, ResultListener
from toolgate.core.output_store import OUTPUT_STORE, OutputStore
from toolgate.core.permission import Approver, PermissionMode, PermissionPolicy
from toolgate.core.registry import ToolRegistry
from toolgate.core.runner import ToolRunner
from toolgate.core.session import Session
from toolgate.core.tool import AnyTool
from toolgate.permissions.basic import BasicPolicy
from toolgate.tools import builtin_tools


@dataclass(eq=False)
class Runtime:
    session: Session
    registry: ToolRegistry
    runner: ToolRunner
    orchestrator: Orchestrator

    async def run_turn(
        self, uses: Sequence[ToolUse], cancel: CancelToken | None = None, on_result: ResultListener | None = None
    ) -> list[ToolResult]:
        return await self.orchestrator.run_turn(uses, cancel, on_result)

    async def aclose(self) -> None:
        await self.session.aclose()


def build_runtime(
    workspace: Path,
    approver: Approver,
    *,
    mode: PermissionMode = PermissionMode.DEFAULT,
    additional_dirs: Sequence[Path] = (),
    policy: PermissionPolicy | None = None,
    tools: Sequence[AnyTool] | None = None,
    session_id: str | None = None,
    data_dir: Path | None = None,
    max_concurrency: int | None = None,
) -> Runtime:
    session = Session(
        workspace=workspace,
        policy=policy or BasicPolicy(),
        approver=approver,
        mode=mode,
        additional_dirs=list(additional_dirs),
        data_dir=data_dir,
    )
    if session_id is not None:
        session.id = session_id
    if data_dir is not None:
        outputs = data_dir / "outputs"
        session.deps.override_factory(OUTPUT_STORE, lambda _r: OutputStore(outputs))
    registry = ToolRegistry(builtin_tools() if tools is None else tools)
    runner = ToolRunner(registry, session)
    return Runtime(session, registry, runner, Orchestrator(runner, max_concurrency))
