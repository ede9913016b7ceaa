"""Tools and a runtime builder for permission tests. The tools only describe themselves; none does real work
except where a test needs to see that a call ran."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolgate.bash.classify import classify
from toolgate.core.context import HOME_DIR, ToolContext
from toolgate.core.permission import Approver, NonInteractiveApprover, PermissionCheck, PermissionMode
from toolgate.core.tool import AnyTool, DescribeContext, Tool, ToolInput
from toolgate.permissions.bash import Classifier
from toolgate.permissions.decide import CheckResult, PermissionEngine
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.tools.read import ReadTool


class _Base(Tool[ToolInput, str]):
    def description(self, ctx: DescribeContext) -> str:
        return f"{self.name} for tests"

    async def call(self, tool_input: ToolInput, ctx: ToolContext) -> str:
        return f"{self.name} ran"

    def to_result(self, data: str, ctx: ToolContext) -> str:
        return data


class BashInput(ToolInput):
    command: str
    timeout: int | None = None
    description: str | None = None
    run_in_background: bool = False


class FakeBash(_Base):
    name = "Bash"
    input_model = BashInput


class PathInput(ToolInput):
    file_path: str
    content: str = ""


class FakeWrite(_Base):
    name = "Write"
    input_model = PathInput

    def paths(self, tool_input: ToolInput, ctx: ToolContext) -> Sequence[Path]:
        assert isinstance(tool_input, PathInput)
        return [ctx.resolve_path(tool_input.file_path)]


class FakeEdit(FakeWrite):
    name = "Edit"


class SearchInput(ToolInput):
    pattern: str
    path: str = "."


class FakeGrep(_Base):
    name = "Grep"
    input_model = SearchInput

    def is_read_only(self, tool_input: ToolInput) -> bool:
        return True

    def paths(self, tool_input: ToolInput, ctx: ToolContext) -> Sequence[Path]:
        assert isinstance(tool_input, SearchInput)
        return [ctx.resolve_path(tool_input.path)]


class UrlInput(ToolInput):
    url: str


class FakeFetch(_Base):
    name = "WebFetch"
    input_model = UrlInput

    def is_read_only(self, tool_input: ToolInput) -> bool:
        return True


class NoInput(ToolInput):
    pass


class Gadget(_Base):
    """An unknown tool that answers nothing: it writes, somewhere."""

    name = "Gadget"
    aliases = ("Widget",)
    input_model = NoInput


class Lookup(_Base):
    """An unknown read-only tool with no paths."""

    name = "Lookup"
    input_model = NoInput

    def is_read_only(self, tool_input: ToolInput) -> bool:
        return True


class Scribe(FakeWrite):
    """An unknown tool that writes the path it is given."""

    name = "Scribe"


class Asker(_Base):
    name = "Asker"
    input_model = NoInput

    async def check_permissions(self, tool_input: ToolInput, ctx: ToolContext) -> PermissionCheck:
        return PermissionCheck(behavior="ask", reason="Asker always asks")


class Refuser(_Base):
    name = "Refuser"
    input_model = NoInput

    async def check_permissions(self, tool_input: ToolInput, ctx: ToolContext) -> PermissionCheck:
        return PermissionCheck(behavior="deny", reason="Refuser never runs")


class SelfAllowing(FakeWrite):
    """A writer whose own check allows every call (safety checks still apply)."""

    name = "SelfAllowing"

    async def check_permissions(self, tool_input: ToolInput, ctx: ToolContext) -> PermissionCheck:
        return PermissionCheck(behavior="allow", reason="it vouches for itself")


def fake_tools() -> list[AnyTool]:
    return [
        ReadTool(), FakeBash(), FakeWrite(), FakeEdit(), FakeGrep(), FakeFetch(), Gadget(), Lookup(), Scribe(),
        Asker(), Refuser(), SelfAllowing(),
    ]  # fmt: skip


def make_runtime(
    workspace: Path,
    *,
    allow: Sequence[str] = (),
    ask: Sequence[str] = (),
    deny: Sequence[str] = (),
    mode: PermissionMode = PermissionMode.DEFAULT,
    add_dirs: Sequence[Path] = (),
    home: Path | None = None,
    settings_files: Sequence[Path] = (),
    read_settings: bool = False,
    trust_workspace: bool | None = None,
    classifier: Classifier = classify,
    approver: Approver | None = None,
) -> Runtime:
    home = home or workspace.parent / "home"
    home.mkdir(exist_ok=True)
    engine = PermissionEngine(
        workspace,
        home=home,
        cli_rules={"allow": list(allow), "ask": list(ask), "deny": list(deny)},
        settings_files=settings_files,
        read_settings_files=read_settings,
        trust_workspace=trust_workspace,
        classifier=classifier,
    )
    options = RuntimeOptions(
        mode=mode, additional_dirs=add_dirs, policy=engine, tools=fake_tools(), dependencies={HOME_DIR: home}
    )
    rt = build_runtime(workspace, approver or NonInteractiveApprover(), options)
    return rt


async def check(rt: Runtime, tool: str, **tool_input: object) -> CheckResult:
    return await rt.check(tool, dict(tool_input))


async def bash(rt: Runtime, command: str) -> CheckResult:
    return await check(rt, "Bash", command=command)
