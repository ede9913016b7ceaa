"""MCP in a real VS Code: a workspace `.mcp.json` server shows up in the MCP Servers view as needing approval, the
person approves it from the view (a modal says what runs), it starts, and the mock model calls its tool through the
chat's usual approval card. The real sidecar, the SDK-written edge server and the mock model; nothing faked.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from codeserver import REPO, CodeServer, wait_for
from playwright.sync_api import Locator, expect
from test_real_flows import MockFactory, mock_model, send  # noqa: F401  (mock_model is a fixture)
from workbench import Workbench

pytestmark = pytest.mark.e2e

EDGE_SERVER = REPO / "tests" / "unit" / "mcp" / "edge_server.py"


@pytest.fixture
def workspace_server(code_server: CodeServer) -> Iterator[Path]:
    """The workspace's .mcp.json names the edge server; its pids land in the returned file."""
    pidfile = code_server.root / "edge-pids.txt"
    config = code_server.workspace / ".mcp.json"
    server = {"command": sys.executable, "args": [str(EDGE_SERVER), "--pidfile", str(pidfile)]}
    config.write_text(json.dumps({"mcpServers": {"edge": server}}, indent=2))
    try:
        yield pidfile
    finally:
        config.unlink(missing_ok=True)


def mcp_header(workbench: Workbench) -> Locator:
    header = workbench.page.locator(".pane-header", has_text="MCP Servers")
    header.wait_for(state="visible")
    return header


@pytest.fixture
def mcp_view(workbench: Workbench) -> Iterator[Locator]:
    """The MCP Servers view, expanded (it starts collapsed); collapsed again after, so the chat gets its room back."""
    workbench.open_chat()  # the toolgate side bar, where the view is
    header = mcp_header(workbench)
    if header.get_attribute("aria-expanded") == "false":
        header.click()
    try:
        yield workbench.page.locator(".pane", has=header)
    finally:
        header = mcp_header(workbench)
        if header.get_attribute("aria-expanded") == "true":
            header.click()
        expect(header).to_have_attribute("aria-expanded", "false")


def test_approve_a_workspace_server_from_the_view_and_the_model_calls_its_tool(
    mock_model: MockFactory,  # noqa: F811
    workspace_server: Path,
    workbench: Workbench,
    mcp_view: Locator,
) -> None:
    page = workbench.page
    model = mock_model(
        [
            {"text": "Asking the edge.", "tool_uses": [{"name": "mcp__edge__echo", "input": {"text": "hi there"}}]},
            {"text": "The edge server echoed it back."},
        ]
    )
    view = mcp_view
    row = view.locator(".monaco-list-row", has_text="edge").first
    expect(row).to_contain_text("needs-approval")
    # The new session's server waiting for approval is also put to the person in a notification.
    toast = page.locator(".notification-toast", has_text='MCP server "edge" (workspace settings) does not start')
    expect(toast).to_be_visible()
    assert not workspace_server.exists(), "a workspace server started before it was approved"
    workbench.shot("60-mcp-view-needs-approval")

    row.hover()
    row.locator('.action-label[aria-label="Approve MCP Server"]').click()
    dialog = page.locator(".monaco-dialog-box")
    expect(dialog).to_contain_text("It runs:")
    expect(dialog).to_contain_text("edge_server.py")
    workbench.shot("61-mcp-approve-dialog")
    dialog.get_by_role("button", name="Approve").click()
    expect(row).to_contain_text("running")
    toast.get_by_role("button", name="Not Now").click()
    wait_for(lambda: workspace_server.exists(), 30, "the approved server to start")
    expect(view.locator(".monaco-list-row", has_text="echo").first).to_contain_text("server says read-only")
    workbench.shot("62-mcp-view-running")

    chat = workbench.open_chat()
    send(workbench, "Ask the edge server to echo.")
    card = chat.locator(".approval-pending").last
    expect(card).to_contain_text("mcp__edge__echo")  # not read-only on the server's word: the person is asked
    card.get_by_role("button", name="Allow once").click()
    expect(chat.locator(".msg-assistant").last).to_contain_text("The edge server echoed it back.")
    workbench.shot("63-mcp-tool-called")

    requests = model.requests()
    names = [tool.get("name") or tool["function"]["name"] for tool in requests[0]["body"]["tools"]]
    assert "mcp__edge__echo" in names
    result = requests[1]["body"]["messages"][-1]
    assert "hi there" in json.dumps(result)
