"""toolgate/hooks/list and toolgate/hooks/trust over a real session: the panel's view of hooks waiting for review,
and its trust button (recorded in the user settings file; the workspace's file is never written)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from tests.unit.permissions.helpers import make_runtime

from toolgate.runtime import Runtime
from toolgate.sidecar import protocol_hooks as p
from toolgate.sidecar.hooks_handlers import hooks_handlers
from toolgate.testing import run1


@pytest.fixture
async def runtime_with_a_project_hook(workspace: Path, tmp_path: Path) -> AsyncIterator[Runtime]:
    project = workspace / ".toolgate" / "settings.json"
    project.parent.mkdir()
    entry = {"matcher": "Read", "hooks": [{"type": "command", "command": f"cat >/dev/null; touch {tmp_path}/ran"}]}
    project.write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    (workspace / "a.txt").write_text("alpha\n")
    rt = make_runtime(workspace, read_settings=True, trust_workspace=True)
    yield rt
    await rt.aclose()


async def test_the_panel_lists_a_waiting_hook_and_trusts_it(
    runtime_with_a_project_hook: Runtime, workspace: Path, tmp_path: Path
) -> None:
    rt = runtime_with_a_project_hook
    handlers = hooks_handlers(lambda _session_id: rt)
    project_bytes = (workspace / ".toolgate" / "settings.json").read_bytes()
    [waiting] = (await handlers[p.HOOKS_LIST](p.HooksListParams(session_id=rt.session.id))).hooks
    assert waiting.state == "waiting" and waiting.command == f"cat >/dev/null; touch {tmp_path}/ran"
    await run1(rt, "Read", file_path="a.txt")
    assert not (tmp_path / "ran").exists()

    with pytest.raises(JsonRpcInvalidParams, match="names no workspace hook"):
        await handlers[p.HOOKS_TRUST](p.HooksTrustParams(session_id=rt.session.id, ids=["0000"]))
    after = await handlers[p.HOOKS_TRUST](p.HooksTrustParams(session_id=rt.session.id, ids=[waiting.id]))
    assert [h.state for h in after.hooks] == ["trusted"]
    user = json.loads((Path(os.environ["XDG_CONFIG_HOME"]) / "toolgate" / "settings.json").read_text())
    assert len(user["trustedHooks"]) == 1 and user["trustedHooks"][0].startswith(waiting.id)
    assert (workspace / ".toolgate" / "settings.json").read_bytes() == project_bytes
    await run1(rt, "Read", file_path="a.txt")
    assert (tmp_path / "ran").exists()  # runs from the next call on, in the same session
