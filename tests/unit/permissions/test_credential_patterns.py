"""Issue 27 §4: credential checks see through the patterns bash expands before a program reads (`*`, `?`,
`[…]`, braces, `~`, `$HOME`), in every mode; patterns that cannot reach a credential file stay read-only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.unit.permissions.conftest import RuntimeInMode
from tests.unit.permissions.helpers import bash

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime

MODES = list(PermissionMode)
REACHES_CREDENTIALS = [
    "cat ~/.ss?/id_*", "cat ~/.ss[h]/id_rsa", "head ~/.s*/id*", "cat ~/.*/credentials", "cat $HOME/.ss?/id_rsa",
    "cat ${HOME}/.a[w]s/cred*", "cat .en[v]", "cat .e*", "grep -n KEY .env.*", "base64 sub/.E[N]V",
    "cat {a.txt,.en?}", "cat ~/.ssh/id_rsa*", "python3 x.py ~/.ss?/id_rsa", "tail ~/.docker/*.json",
]  # fmt: skip
STAYS_READ_ONLY = ["cat src/*.py", "wc -l src/*", "head -5 src/*.py", "ls -d */", "cat *.md", "cat .gitignore*"]


@pytest.fixture
def rt_for(runtime_in_mode: RuntimeInMode) -> Callable[[PermissionMode], Runtime]:
    return lambda mode: runtime_in_mode(mode, allow=["Bash", "Read(//**)"])


@pytest.mark.parametrize("mode", MODES)
async def test_a_pattern_that_can_match_a_credential_file_asks_in_every_mode(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode
) -> None:
    rt = rt_for(mode)
    for command in REACHES_CREDENTIALS:
        result = await bash(rt, command)
        assert (result.decision, "may read credentials" in result.reason) == ("ask", True), (command, result.reason)


async def test_a_command_that_sets_dotglob_makes_a_star_reach_dot_files(
    rt_for: Callable[[PermissionMode], Runtime],
) -> None:
    rt = rt_for(PermissionMode.BYPASS)
    assert (await bash(rt, "cat * | head")).decision == "allow"
    result = await bash(rt, "shopt -s dotglob; cat .[e]* *")
    assert result.decision == "ask" and "credentials" in result.reason


@pytest.mark.parametrize("command", STAYS_READ_ONLY)
async def test_patterns_that_cannot_reach_one_stay_read_only(runtime_in_mode: RuntimeInMode, command: str) -> None:
    result = await bash(runtime_in_mode(PermissionMode.DEFAULT), command)
    assert result.decision == "allow", (command, result.reason)


UNKNOWN_OR_ASSIGNED = [
    "f=~/.ssh/id_rsa; cat $f", "x=.ssh; cat ~/$x/id_rsa", "k=.aws; head ~/${k}/credentials", "cat $(cat list.txt)",
    "wc -l $(git ls-files '*.py')", "grep -n key `cat names.txt`", "sed -n p $(cat list.txt)",
]  # fmt: skip
STILL_ALLOWED_IN_BYPASS = ["git commit -m \"$(cat <<'EOF'\nfix: x\nEOF\n)\"", "echo $(date)", "f=a.txt; cat $f"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_path_from_an_earlier_assignment_or_a_substitution_is_checked(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode
) -> None:
    rt = rt_for(mode)
    for command in UNKNOWN_OR_ASSIGNED:
        result = await bash(rt, command)
        assert (result.decision, "may read credentials" in result.reason) == ("ask", True), (command, result.reason)


@pytest.mark.parametrize("command", STILL_ALLOWED_IN_BYPASS)
async def test_substitutions_that_read_no_path_stay_allowed_in_bypass(
    rt_for: Callable[[PermissionMode], Runtime], command: str
) -> None:
    result = await bash(rt_for(PermissionMode.BYPASS), command)
    assert result.decision == "allow", (command, result.reason)
