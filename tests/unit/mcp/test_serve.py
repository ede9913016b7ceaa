"""`toolgate mcp serve` driven by the SDK's own client over real stdio."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from toolgate.cli.mcp_server import SERVED_TOOLS


@contextlib.asynccontextmanager
async def toolgate_server(workspace: Path, home: Path, *flags: str, elicit: Any = None) -> AsyncIterator[ClientSession]:
    environ = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolgate", "mcp", "serve", "--workspace", str(workspace), *flags],
        env=environ,
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write, elicitation_callback=elicit) as s:
        await s.initialize()
        yield s


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


async def test_lists_the_served_tools_with_schemas_and_annotations(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    async with toolgate_server(tmp_path / "ws", tmp_path) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert sorted(tools) == sorted(SERVED_TOOLS)
    assert tools["Read"].annotations is not None and tools["Read"].annotations.read_only_hint is True
    assert tools["Bash"].annotations is not None and tools["Bash"].annotations.read_only_hint is False
    assert tools["Bash"].annotations.open_world_hint is True
    assert tools["Edit"].annotations is not None and tools["Edit"].annotations.destructive_hint is True
    assert tools["Edit"].input_schema["additionalProperties"] is False
    assert "file_path" in tools["Edit"].input_schema["properties"]


async def test_read_edit_then_a_stale_edit_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    target = workspace / "notes.txt"
    target.write_text("alpha\nbeta\n")
    async with toolgate_server(workspace, tmp_path, "--permission-mode", "acceptEdits") as session:
        read = await session.call_tool("Read", {"file_path": str(target)})
        assert not read.is_error and "alpha" in text_of(read)
        edit = await session.call_tool("Edit", {"file_path": str(target), "old_string": "beta", "new_string": "gamma"})
        assert not edit.is_error, text_of(edit)
        assert target.read_text() == "alpha\ngamma\n"
        target.write_text("changed behind its back\n")
        os.utime(target, (target.stat().st_atime + 5, target.stat().st_mtime + 5))
        stale = await session.call_tool("Edit", {"file_path": str(target), "old_string": "alpha", "new_string": "x"})
        assert stale.is_error and 'kind="state"' in text_of(stale)
    assert target.read_text() == "changed behind its back\n"


async def test_a_bash_call_needing_approval_is_refused_with_its_rule_without_elicitation(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    # Without the sandbox: under it (the command line's default, where bwrap works) a write inside the workspace
    # runs contained without asking, and this test is about the asking.
    async with toolgate_server(tmp_path / "ws", tmp_path, "--sandbox", "off") as session:
        # A command a Bash rule covers in full (a rule is offered only then: `touch` would need a write too).
        result = await session.call_tool("Bash", {"command": "git push"})
    assert result.is_error and "--allow 'Bash(git push)'" in text_of(result) and "did not run" in text_of(result)


async def test_a_bash_call_needing_approval_is_asked_through_elicitation(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    asked: list[str] = []

    async def say_yes(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"allow": True})

    async def say_no(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="decline")

    async with toolgate_server(tmp_path / "ws", tmp_path, "--sandbox", "off", elicit=say_no) as session:
        declined = await session.call_tool("Bash", {"command": "touch declined"})
    assert declined.is_error and "declined" in text_of(declined)
    async with toolgate_server(tmp_path / "ws", tmp_path, "--sandbox", "off", elicit=say_yes) as session:
        allowed = await session.call_tool("Bash", {"command": "touch made-by-bash"})
    assert not allowed.is_error, text_of(allowed)
    assert len(asked) == 1 and "touch made-by-bash" in asked[0]
    assert (tmp_path / "ws" / "made-by-bash").exists() and not (tmp_path / "ws" / "declined").exists()


async def test_an_allow_rule_from_the_command_line_lets_the_call_run(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    async with toolgate_server(
        tmp_path / "ws", tmp_path, "--allow", "Bash(touch:*)", "--allow", "Edit(/**)"
    ) as session:
        result = await session.call_tool("Bash", {"command": "touch ok"})
    assert not result.is_error and (tmp_path / "ws" / "ok").exists()
