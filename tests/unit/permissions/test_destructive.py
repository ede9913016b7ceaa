"""Issue 13 §4: destructive commands ask in every mode, bypassPermissions included; everyday cleanups inside
the workspace still run unattended in bypass."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.unit.permissions.conftest import RuntimeInMode
from tests.unit.permissions.helpers import bash

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime

MODES = list(PermissionMode)
DESTRUCTIVE = [
    "find ~ -name '*.log' -delete",
    "find / -name core -delete",
    "find ~ -type f -exec rm {} +",
    "find / -exec /bin/rm -f {} \\;",
    "sudo find / -delete",
    "find $DIR -delete",
    "git clean -fdx",
    "git clean -f -d -x",
    "git clean -fX",
    "git -C . clean -xf",
    "git reset --hard",
    "git reset --hard HEAD~3",
    "git checkout -- .",
    "git checkout .",
    "git checkout -f main",
    "git restore .",
    "git restore --worktree :/",
    "git restore --staged --worktree .",
    "git restore -SW .",
    "git push --force",
    "git push -f origin main",
    "git push --force-with-lease",
    "git push origin +main",
    "git push --mirror",
    "git config core.hooksPath /tmp/hooks",
    "git config --global core.pager 'sh -c evil'",
    "git config --add alias.x '!sh'",
    "rm -rf .git",
    "rm -rf ~",
    "rm -rf /",
    "chmod -R 777 ~",
    "chmod -R 000 /",
    "chown -R nobody ~",
    "sudo chown -R me /",
    "dd if=/dev/zero of=/dev/sda",
    "mkfs.ext4 /dev/sdb1",
    "mkfs -t ext4 /dev/sdb1",
    "wipefs -a /dev/sdb",
    "echo x > /dev/sda",
    "cat image.iso > /dev/sdb",
]
STILL_UNATTENDED = [
    "find . -name '*.pyc' -delete",
    "find build -type f -exec rm {} +",
    "git clean -n -dx",
    "git clean -f",
    "git clean -fd",  # untracked directories, as plain -f removes untracked files
    "git restore --staged .",  # unstages: the files in the tree stay as they are
    "git restore -S :/",
    "git reset --soft origin/main",
    "git checkout -- src/app.py",
    "git restore src/app.py",
    "git push origin main",
    "chmod -R u+w build",
    "rm -rf build",
    "git config --get user.name",
    "git config user.email",
    "git config --list",
    "echo x > /dev/null",
    "dd if=/dev/zero of=blank.img bs=1k count=1",
]


@pytest.fixture
def rt_for(runtime_in_mode: RuntimeInMode) -> Callable[[PermissionMode], Runtime]:
    return lambda mode: runtime_in_mode(mode, allow=["Bash"])


@pytest.mark.parametrize("mode", MODES)
async def test_destructive_commands_ask_in_every_mode(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode
) -> None:
    rt = rt_for(mode)
    for command in DESTRUCTIVE:
        result = await bash(rt, command)
        assert (result.decision, "every mode" in result.reason) == ("ask", True), (mode, command, result.reason)


async def test_workspace_cleanups_still_run_in_bypass(rt_for: Callable[[PermissionMode], Runtime]) -> None:
    rt = rt_for(PermissionMode.BYPASS)
    for command in STILL_UNATTENDED:
        result = await bash(rt, command)
        assert result.decision == "allow", (command, result.reason)
