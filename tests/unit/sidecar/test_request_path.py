"""What one toolgate/tools/run costs in the sidecar beyond its turn: the work the common case does not need stays
out of it (each test fails if it comes back), and the answer is what the turn produced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.unit.sidecar.in_process import Collect, initialize_params, send, serving

from toolgate.sidecar import protocol as p


async def answer(out: Collect, msg_id: str) -> dict[str, Any]:
    """The answer to `msg_id`, past the server's own requests and notifications."""
    while "method" in (message := await out.next()) or message.get("id") != msg_id:
        pass
    return message


async def test_tools_run_answers_the_turn_s_results_without_validating_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("one\ntwo\n")
    server, out = serving()
    send(server, "initialize", initialize_params(tmp_path / "storage"), msg_id="init")
    assert "result" in await answer(out, "init")
    send(server, p.SESSION_NEW, {"workspace": str(workspace)}, msg_id="new")
    session = (await answer(out, "new"))["result"]["sessionId"]

    def validated(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the results were validated again")

    # The orchestrator's ToolResults are models already; the answer takes them as they are.
    monkeypatch.setattr(p.ToolsRunResult, "__init__", validated)
    calls = [{"id": "t1", "name": "Read", "input": {"file_path": "a.txt"}}, {"id": "t2", "name": "Nope", "input": {}}]
    send(server, p.TOOLS_RUN, {"sessionId": session, "calls": calls}, msg_id="run")
    [read, unknown] = (await answer(out, "run"))["result"]["results"]
    assert read == {"type": "tool_result", "tool_use_id": "t1", "content": read["content"], "is_error": False}
    assert "one" in read["content"] and "two" in read["content"]
    assert unknown["tool_use_id"] == "t2" and unknown["is_error"] is True
    await server.aclose()
