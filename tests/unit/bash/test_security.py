"""Raw-text checks: each trick is caught with its own reason, and ordinary commands pass."""

from __future__ import annotations

import pytest

from toolgate.bash.classify import classify
from toolgate.bash.security import MAX_COMMAND_CHARS, raw_check

CAUGHT = [
    ("ls\x00 -la", "NUL byte"),
    ("ls\r rm -rf ~", "carriage return"),
    ("echo 'a\rb'", "carriage return"),
    ("ls \x1b[2K", "control characters"),
    ("ls\x7f", "control characters"),
    ("ls\u00a0-la", "unicode spaces"),
    ("ls\u2003-la", "unicode spaces"),
    ("ls\u2028rm x", "unicode spaces"),
    ("ls\u200b-la", "unicode spaces"),
    ("echo \ufeffx", "unicode spaces"),
    ("echo 'x' \u202e'y'", "bidirectional"),
    ("cat /etc/pass\u2066wd", "bidirectional"),
    ("echo$IFS-la", "$IFS"),
    ("cat${IFS}/etc/passwd", "$IFS"),
    ('echo "$IFS"', "$IFS"),
    ("echo ${IFS:0:1}", "$IFS"),
    ("cat /proc/self/environ", "/proc/*/environ"),
    ("cat /proc/1/environ", "/proc/*/environ"),
    ("strings '/proc/self/environ'", "/proc/*/environ"),
    ("tr '\\0' '\\n' < /proc/$$/environ", "/proc/*/environ"),
    ("echo hi \\; rm x", "backslash-escaped operators"),
    ("echo \\| cat", "backslash-escaped operators"),
    ("echo a \\&\\& b", "backslash-escaped operators"),
    ("cat \\< x", "backslash-escaped operators"),
    ("echo \\> out", "backslash-escaped operators"),
    ("sed $'\\x2di' 's/a/b/' f", "with character escapes"),
    ("$'\\x72\\x6d' -rf x", "with character escapes"),
    ("echo $'\\101'", "with character escapes"),
    ("echo $'\\u0041'", "with character escapes"),
    ("echo $'\\cA'", "with character escapes"),
    ("sed $'-i' s/a/b/ f", "used to write a flag"),
    ('echo $"hello"', "locale quoting"),
    ("zmodload zsh/system", "zsh module builtin"),
    ("ls; zmodload zsh/files", "zsh module builtin"),
    ("X=1 sysopen -w -u 3 f", "zsh module builtin"),
    ("command ztcp host 80", "zsh module builtin"),
    ("zf_rm -rf /", "zsh module builtin"),
    ("emulate sh -c 'x'", "zsh module builtin"),
]

CLEAN = [
    "ls -la",
    "echo 'tab\there'",
    "printf 'a\\nb'",
    "echo $'\\n'",
    "echo $'a\\tb'",
    "find . -name '*.py' \\( -size +1k -o -empty \\)",
    "echo 'IFS is a word'",
    "echo '$IFS in single quotes'",
    "echo 'unicode: é ü ß 日本'",
    "echo '\u00a0 inside quotes'",
    "grep -r environ src/",
    "echo 'zmodload is just text'",
    "echo a\\ b",
    "echo \\\\; ls",
]


@pytest.mark.parametrize(("command", "why"), CAUGHT)
def test_caught(command: str, why: str) -> None:
    reasons = raw_check(command)
    assert any(why in reason for reason in reasons), reasons
    result = classify(command)
    assert not result.read_only
    assert result.raw_check_failures == reasons


@pytest.mark.parametrize("command", CLEAN)
def test_clean(command: str) -> None:
    assert raw_check(command) == ()


def test_overlong_commands_are_not_analysed() -> None:
    command = "echo " + "a" * MAX_COMMAND_CHARS
    [reason] = raw_check(command)
    assert "characters long" in reason
    assert not classify(command).read_only


def test_escaped_backslash_before_an_operator_is_a_real_operator_not_an_escaped_one() -> None:
    # `\\;` is an escaped backslash followed by a real `;`: bash runs two commands, and so does the parser.
    assert raw_check("echo \\\\; ls") == ()
    assert [c.argv for c in classify("echo \\\\; ls").commands] == [("echo", "\\"), ("ls",)]
