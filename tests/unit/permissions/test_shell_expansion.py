"""Issue 13 §6: paths are judged after the expansions bash applies (braces, tilde); a word that cannot be
expanded beforehand is an unknown path, so the command is not read-only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.unit.permissions.conftest import RuntimeInMode
from tests.unit.permissions.helpers import bash

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime


@pytest.fixture
def rt_for(runtime_in_mode: RuntimeInMode) -> Callable[[PermissionMode], Runtime]:
    return lambda mode: runtime_in_mode(mode)


@pytest.mark.parametrize(
    ("command", "mode", "decision"),
    [
        ("cat src/{a,../../../etc/passwd}", PermissionMode.DEFAULT, "ask"),  # the second word leaves the workspace
        ("cat {a,b}.txt", PermissionMode.DEFAULT, "allow"),
        ("cat ~/{notes,.ssh/id_rsa}", PermissionMode.BYPASS, "ask"),  # a credential behind braces
        ("echo x > {a,.git/config}", PermissionMode.BYPASS, "ask"),
        ("rm -rf {build,~}", PermissionMode.BYPASS, "ask"),
        ("cp a.txt {b,.claude/settings.json}", PermissionMode.BYPASS, "ask"),
        ("cat f{1..100000}", PermissionMode.DEFAULT, "ask"),
        ("cat $SOME_FILE", PermissionMode.DEFAULT, "ask"),
    ],
)
async def test_paths_after_expansion(
    rt_for: Callable[[PermissionMode], Runtime], command: str, mode: PermissionMode, decision: str
) -> None:
    result = await bash(rt_for(mode), command)
    assert result.decision == decision, (command, result.reason)
    if decision == "ask" and mode is PermissionMode.DEFAULT:
        assert not result.read_only or "outside" in result.reason, (command, result.reason)
