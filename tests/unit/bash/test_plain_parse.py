"""`parse_plain` (the way past bashlex) gives exactly bashlex's parse, or declines and leaves it to bashlex."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.bash.parse import ParsedScript, parse
from toolgate.bash.plain import parse_plain
from toolgate.bash.quoting import scan

CORPUS = Path(__file__).parents[3] / "bench" / "data" / "commands.jsonl"


def _both(command: str) -> tuple[ParsedScript | None, ParsedScript]:
    info = scan(command)
    return parse_plain(command, info), parse(command, info)


def test_on_the_corpus_it_agrees_with_bashlex_wherever_it_answers() -> None:
    commands = [json.loads(line)["command"] for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]
    answered = 0
    for command in commands:
        plain, full = _both(command)
        if plain is not None:
            answered += 1
            assert plain == full, command
    assert answered > len(commands) // 2  # most agent commands are plain: that is what makes it worth having


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "rg -n 'def main' src | head -20",
        "cd web && npm test || echo failed; ls",
        'grep -r "a  b" ~/src *.py',
        "make CC=gcc",
    ],
)
def test_plain_commands_are_parsed_without_bashlex(command: str) -> None:
    plain, full = _both(command)
    assert plain is not None and plain == full


@pytest.mark.parametrize(
    "command",
    [
        "echo $HOME",
        "ls > out",
        "a &",
        "a | | b",
        "| a",
        "a ;",
        "(cd x && ls)",
        "{ ls; }",
        "ls # note",
        "ls\nrm x",
        "if true; then ls; fi",
        "! ls",
        "time ls",
        "X=1 ls",
        "echo \\; rm x",
        "echo 'open",
        "cat <<EOF\nx\nEOF",
        "a |& b",
        "a;;b",
    ],
)
def test_anything_else_is_left_to_bashlex(command: str) -> None:
    assert _both(command)[0] is None


_PIECES = [
    "ls",
    "git",
    "status",
    "-la",
    "--x=1",
    "a=b",
    "X=1",
    "src/*.py",
    "~",
    "~/d",
    "~root",
    "'it s'",
    "''",
    '""',
    "a[[b",
    "x]]",
    "-",
    "=",
    "\r",
    "caf\u00e9",
    '"a b"',
    "'$x'",
    '"|"',
    "in",
    "do",
    "[",
    "]",
    "[[",
    "{a,b}",
    "x{",
    "%1",
    "^x",
    "@",
    "a#b",
    "#c",
    "!",
    "$y",
    "`z`",
    "\\;",
    "|",
    "||",
    "&&",
    ";",
    "&",
    "|&",
    ">",
    "2>&1",
    "<",
    "(",
    ")",
    "\n",
    "'",
    "time",
    "echo",
    "cd",
]


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from([" ", "", "\t", "  "])), min_size=1, max_size=9))
def test_generated_commands_parse_as_bashlex_parses_them(pieces: list[tuple[str, str]]) -> None:
    command = "".join(piece + gap for piece, gap in pieces)
    plain, full = _both(command)
    if plain is not None:
        assert plain == full


def test_bashlex_is_imported_only_for_a_command_that_needs_it() -> None:
    # Building bashlex's parser costs ~0.15 s: a session whose commands are all plain should never pay for it.
    probe = (
        "import sys\n"
        "from toolgate.bash.classify import classify\n"
        "assert classify('git status && ls -la src | wc -l').read_only\n"
        "assert 'bashlex' not in sys.modules, 'a plain command imported bashlex'\n"
        "assert not classify('echo $(rm -rf x)').read_only\n"
        "assert 'bashlex' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
