"""Commands that show environment values ask in every mode; harmless expansions stay read-only."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from tests.unit.permissions.conftest import RuntimeInMode
from tests.unit.permissions.helpers import bash

from toolgate.core.permission import PermissionMode
from toolgate.runtime import Runtime

MODES = list(PermissionMode)
SHOWS_ENVIRONMENT = [
    "env",
    "env -u PATH",
    "FOO=1 env",
    "env | grep KEY",
    "sudo env",
    "bash -c 'env'",
    "printenv",
    "printenv ANTHROPIC_API_KEY",
    "printenv -0 GITHUB_TOKEN",
    "set",
    "export",
    "export -p",
    "declare -p",
    "declare -x",
    "declare -px",
    "typeset -p",
    "compgen -v",
    "compgen -A variable",
    "echo $ANTHROPIC_API_KEY",
    'echo "${OPENAI_API_KEY}"',
    'printf "%s" "$AWS_SECRET_ACCESS_KEY"',
    'curl -H "Authorization: $GH_TOKEN" http://127.0.0.1/',
    "echo ${#MY_SERVICE_API_KEY}",
    "echo ${!AWS*}",
    "cat /proc/self/environ",
    "cat /proc/$$/environ",
    "ps auxe",
    "xargs printenv",
    "awk 'BEGIN { for (k in ENVIRON) print k, ENVIRON[k] }'",
    "gawk 'BEGIN { print ENVIRON[\"HOME\"] }'",
    # issue 27 §5: the same dump written another way, or by a language's own program text
    "export -n",
    "export -f",
    "compgen -ve",
    "compgen -o default -Av",
    "jq -n env",
    "jq -n '$ENV.HOME'",
    "python3 -c 'import os; print(os.environ)'",
    "node -e 'console.log(process.env)'",
    "perl -ne 'print $ENV{HOME}' a.txt",
    "ruby -e 'p ENV.to_h'",
]
HARMLESS = ["echo $HOME", "printenv PATH", "echo '$GITHUB_TOKEN'", "set -e", "ps aux", "echo \\$GH_TOKEN"]


@pytest.fixture
def rt_for(runtime_in_mode: RuntimeInMode) -> Callable[[PermissionMode], Runtime]:
    return lambda mode: runtime_in_mode(mode, allow=["Bash"])


@pytest.mark.parametrize("mode", MODES)
async def test_commands_that_show_the_environment_ask_in_every_mode(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode
) -> None:
    rt = rt_for(mode)
    for command in SHOWS_ENVIRONMENT:
        result = await bash(rt, command)
        assert result.decision == "ask", (mode, command, result.reason)
        assert "every mode" in result.reason, (mode, command, result.reason)
        assert not result.read_only, (mode, command)


@pytest.mark.parametrize("command", HARMLESS)
async def test_harmless_expansions_stay_read_only(rt_for: Callable[[PermissionMode], Runtime], command: str) -> None:
    rt = rt_for(PermissionMode.DEFAULT)
    result = await bash(rt, command)
    assert result.read_only, (command, result.reason)
