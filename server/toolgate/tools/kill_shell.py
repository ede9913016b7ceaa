"""KillShell: stop a background command started by Bash, with every process it started."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.permission import PermissionCheck
from toolgate.core.tool import DescribeContext, Tool, ToolInput, ToolTraits
from toolgate.shell.host import SHELL_HOST, Status


class KillShellInput(ToolInput):
    id: str = Field(description="The id Bash gave when it started the background command (such as bash_1).")


@dataclass(frozen=True, slots=True)
class KillReport:
    id: str
    stopped: bool  # False: it had already finished
    status: Status
    exit_code: int | None
    stored_ref: str | None


class KillShellTool(Tool[KillShellInput, KillReport]):
    name = "KillShell"
    traits = ToolTraits(idempotent=True, open_world=False)
    input_model = KillShellInput

    def description(self, ctx: DescribeContext) -> str:
        return (
            "Stop a command started with Bash run_in_background, together with every process it started "
            "(TERM first, then KILL if they do not exit). Background commands also stop when the session ends."
        )

    def summary(self, tool_input: KillShellInput, workspace: Path) -> str:
        return f"Stop background command {tool_input.id}"

    async def validate(self, tool_input: KillShellInput, ctx: ToolContext) -> None:
        ctx.get(SHELL_HOST).get(tool_input.id)

    async def check_permissions(self, tool_input: KillShellInput, ctx: ToolContext) -> PermissionCheck:
        return PermissionCheck(behavior="allow", reason="it only stops a command this session started")

    async def call(self, tool_input: KillShellInput, ctx: ToolContext) -> KillReport:
        host = ctx.get(SHELL_HOST)
        task = host.get(tool_input.id)
        stopped = await host.kill(task)
        host.adopt_output(task, source=f"Bash background {task.id}")
        return KillReport(task.id, stopped, task.poll(), task.exit_code, task.output_ref if task.adopted else None)

    def to_result(self, data: KillReport, ctx: ToolContext) -> str:
        stored = f" Its output is stored as {data.stored_ref}." if data.stored_ref else ""
        if data.stopped:
            return f"Stopped {data.id} and every process it started.{stored}"
        how = "completed" if data.status == "completed" else f"failed with exit code {data.exit_code}"
        return f"{data.id} had already finished ({how}); there was nothing to stop.{stored}"
