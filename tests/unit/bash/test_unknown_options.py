"""Issue 13 §5: every program in the read-only tables lists the options it accepts; an option it does not list
makes the command not read-only, and the reason names that option."""

from __future__ import annotations

import pytest

from toolgate.bash.classify import classify
from toolgate.bash.programs import PROGRAMS
from toolgate.bash.programs.utilities import TAKES_NO_OPTIONS

# Shell builtins that change only the shell's own state, and commands that print or test their words: none
# of their words can name a file to write or a program to run, so there is no unknown option to refuse.
NO_FILE_OPTIONS = TAKES_NO_OPTIONS | {
    "printf", "cd", "pushd", "popd", "dirs", "break", "continue", "exit", "return", "shift",
    "times", "help",
}  # fmt: skip
MADE_UP = ["--made-up-option", "--made-up-option=x", "-Ϙ"]


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - NO_FILE_OPTIONS))
def test_an_unknown_option_is_not_read_only(name: str) -> None:
    # Programs that can be read-only at all (not writers, not toolchains asked for their version) must say
    # which option stopped them.
    can_read = classify(f"{name} notes.txt").read_only or name in ("git", "xargs", "timeout", "nice", "env")
    for option in MADE_UP:
        result = classify(f"{name} {option} notes.txt")
        assert not result.read_only, (name, option, result.reason)
        if can_read and name != "set":  # set: "set -- ..." is named as the option it reads
            assert option.partition("=")[0] in result.reason, (name, option, result.reason)


def test_the_exemptions_are_all_still_in_the_tables() -> None:
    assert set(PROGRAMS) >= NO_FILE_OPTIONS


@pytest.mark.parametrize(
    "command",
    [
        "base64 -o out.bin notes.txt",
        "base64 --output=out.bin notes.txt",
        "sort -o out.txt notes.txt",
        "uniq notes.txt out.txt",
        "tree -o out.txt",
        "date -s 2020-01-01",
        "hostname evil",
        "cat --made-up notes.txt",
        "ls --made-up",
    ],
)
def test_options_and_operands_that_write_are_not_read_only(command: str) -> None:
    assert not classify(command).read_only


@pytest.mark.parametrize(
    "command",
    [
        "head -20 notes.txt", "tail -n 5 notes.txt", "grep -3 -rn foo .", "ls -la --color=auto", "sort -rn notes.txt",
        "sort --num notes.txt", "od -w16 notes.txt", "column -t notes.txt", "du -sh .", "diff -u a b", "wc -l a",
        "ps aux", "ps -ef", "find . -name '*.py' -mtime -1", "rg -n --hidden foo", "fd -e py", "xxd -ps notes.txt",
        "base64 -d notes.txt", "cut -d: -f1 notes.txt", "stat -c %s notes.txt", "uniq -c notes.txt",
    ],
)  # fmt: skip
def test_everyday_options_stay_read_only(command: str) -> None:
    result = classify(command)
    assert result.read_only, (command, result.reason)
