"""What the classifier reports besides the verdict: argv (checked against real bash), operators, targets."""

from __future__ import annotations

import subprocess

import pytest

from toolgate.bash.classify import classify
from toolgate.bash.parse import parse
from toolgate.bash.quoting import scan

# Arguments with tricky quoting. Real bash prints each argument it would pass; the classifier must agree.
TRICKY_WORDS = [
    "plain",
    "'single quoted'",
    '"double quoted"',
    "a\\ b",
    "'it'\\''s'",
    '"say \\"hi\\""',
    '"back\\\\slash"',
    '"dollar\\$"',
    '"keep\\q"',
    "'no $expansion here'",
    "mixed'single'\"double\"plain",
    "\\l\\s",
    '""',
    "''",
    '-"n"',
    '""-i',
    "'-'e",
    "$'ansi\\tC'",
    "$'\\x2di'",
    "$'\\101\\102'",
    "$'it\\'s'",
    '$"locale"',
    "a\\\nb",
    '"multi\nline"',
    "'*.py'",
    '"[x]"',
    "\\*",
    "~/'quoted'",
    '"~"',
    "x=1",
    '--flag="a b"',
    "'#not-a-comment'",
    "a#b",
    "\\#c",
    "'semi;colon'",
    '"pipe|amp&"',
    "\\;",
    "\\|\\&",
    "é'ü'",
]


def bash_argv(words: str) -> list[str]:
    """The arguments bash passes to a command written with `words` (globbing off, so patterns stay words)."""
    result = subprocess.run(
        ["bash", "-c", "set -f; printf '%s\\0' " + words],
        capture_output=True,
        check=True,
        env={"HOME": "/home/tester", "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
    )
    return result.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


@pytest.mark.parametrize("word", TRICKY_WORDS)
def test_argv_matches_real_bash(word: str) -> None:
    expected = bash_argv(word)
    [command] = classify("printf " + word).commands
    got = list(command.argv[1:])
    if word.startswith("~"):
        expected = ["~" + e.removeprefix("/home/tester") for e in expected]  # we keep ~ for the caller
    assert got == expected


def test_argv_of_every_simple_command_in_order() -> None:
    result = classify("FOO=1 LANG=C git log --oneline | grep -v 'x y' && echo \"done $n\"; cat <in >/dev/null")
    assert [c.argv for c in result.commands] == [
        ("git", "log", "--oneline"),
        ("grep", "-v", "x y"),
        ("echo", "done $n"),
        ("cat",),
    ]
    assert result.commands[0].assignments == ("FOO=1", "LANG=C")
    assert result.commands[0].text == "FOO=1 LANG=C git log --oneline"
    assert [r.op for r in result.commands[3].redirects] == ["<", ">"]
    assert [r.writes for r in result.commands[3].redirects] == [False, False]


def test_wrappers_stay_in_argv_and_are_removed_from_effective_argv() -> None:
    [command] = classify("timeout -k 2 30 nice -n 5 stdbuf -oL env LANG=C nohup git status").commands
    assert command.argv[0] == "timeout"
    assert command.effective_argv == ("git", "status")
    assert command.read_only


def test_time_keyword_is_not_part_of_the_command() -> None:
    result = classify("time -p git log -1 | wc -l")
    assert [c.argv for c in result.commands] == [("git", "log", "-1"), ("wc", "-l")]
    assert result.read_only


@pytest.mark.parametrize(
    ("command", "operators"),
    [
        ("a; b", (";",)),
        ("a && b || c", ("&&", "||")),
        ("a | b |& c", ("|", "|&")),
        ("a & b", ("&",)),
        ("a\nb\nc", ("\n", "\n")),
        ("(a; b) && { c; }", (";", "&&", ";")),
        ("a", ()),
    ],
)
def test_operators(command: str, operators: tuple[str, ...]) -> None:
    assert classify(command).operators == operators


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("echo x > out.txt", ("out.txt",)),
        ("ls >> a 2> b", ("a", "b")),
        ("ls &> all", ("all",)),
        ("ls > /dev/null 2>&1", ()),
        ("ls 2>&1 1>/dev/stderr", ()),
        ("cp a b dest/", ("dest/",)),
        ("cp -t dest a b", ("dest",)),
        ("mv a b", ("a", "b")),
        ("rm -rf build dist", ("build", "dist")),
        ("touch x y", ("x", "y")),
        ("mkdir -p a/b", ("a/b",)),
        ("tee -a log1 log2", ("log1", "log2")),
        ("sed -i 's/a/b/' x.py y.py", ("x.py", "y.py")),
        ("sed -i.bak -e 's/a/b/' x.py", ("x.py",)),
        ("git diff --output=patch.diff", ("patch.diff",)),
        ("git log --output changes.txt -p", ("changes.txt",)),
        ("git show -oshown.txt HEAD", ("shown.txt",)),
        ("git diff --outp=abbrev.txt", ("abbrev.txt",)),  # git takes unambiguous abbreviations
        ("git diff --ext-diff", ()),  # forbidden, but it runs a program rather than writing a named file
        ("sort -o sorted.txt in.txt", ("sorted.txt",)),
        ("uniq in out", ("out",)),
        ("dd if=a of=b", ("b",)),
        ("chmod 644 a b", ("a", "b")),
        ("find . -fprint list.txt", ("list.txt",)),
        ("{ ls; } > grouped", ("grouped",)),
        ("cd sub && echo x > out", ("sub/out",)),
        ("(cd sub; touch a); touch b", ("sub/a", "b")),
        ("cd /tmp; rm x", ("/tmp/x",)),
        ("pushd a; touch x; popd; touch y", ("a/x", "y")),
        ("echo $(touch inner)", ("inner",)),
    ],
)
def test_write_targets(command: str, targets: tuple[str, ...]) -> None:
    assert classify(command).write_targets == targets


@pytest.mark.parametrize(
    ("command", "targets"),
    [
        ("cat a b", ("a", "b")),
        ("head -n 5 notes.txt", ("notes.txt",)),
        ("tail -c 100 -n 3 log", ("log",)),
        ("grep -r pattern src tests", ("src", "tests")),
        ("grep -e pattern file", ("file",)),
        ("grep -f patterns.txt data", ("patterns.txt", "data")),
        ("rg foo", (".",)),
        ("rg foo lib", ("lib",)),
        ("rg --files src", ("src",)),
        ("find src -name x", ("src",)),
        ("find -name x", (".",)),
        ("ls", ()),
        ("ls ~/projects", ("~/projects",)),
        ("wc -l < in.txt", ("in.txt",)),
        ("cat < /dev/null", ()),
        ("cd /etc && cat passwd", ("/etc", "/etc/passwd")),
        ("cd sub && cat ../x", ("sub", "sub/../x")),
        ("(cd sub && cat a) && cat b", ("sub", "sub/a", "b")),
        ("sed -n 1p f.txt", ("f.txt",)),
        ("jq . a.json b.json", ("a.json", "b.json")),
        ("jq -n --args '$ARGS' a b", ()),
        ("awk '{print}' x v=1 y", ("x", "y")),
        ("diff a b", ("a", "b")),
        ('for f in one two; do cat "$f"; done', ("one", "two")),
        ("git diff --no-index a b", ("a", "b")),
        ("xargs -a list.txt echo", ("list.txt",)),
        ("cp ~/.ssh/id_rsa key.txt", ("~/.ssh/id_rsa",)),  # a copy reads its sources
        ("cp -r a b dest/", ("a", "b")),
        ("cp -t dest a b", ("a", "b")),
        ("install -m 644 tool /usr/local/bin/tool", ("tool",)),
        ("dd if=/dev/sda of=disk.img", ("/dev/sda",)),
        ("ln -s ../target link", ()),  # a link reads nothing
        ("touch -r reference.txt x", ("reference.txt",)),
    ],
)
def test_read_targets(command: str, targets: tuple[str, ...]) -> None:
    result = classify(command)
    found = tuple(t for c in result.commands for t in c.read_targets)
    assert found == targets


def test_commands_inside_substitutions_are_listed_and_marked() -> None:
    result = classify('echo "$(git rev-parse HEAD)" && cat <(ls)')
    names = [(c.argv[0], c.in_substitution) for c in result.commands]
    assert ("git", True) in names
    assert ("ls", True) in names
    assert ("echo", False) in names
    assert result.has_substitution


def test_function_bodies_are_listed_and_marked() -> None:
    result = classify("f() { rm -rf x; }")
    assert [(c.argv, c.in_function) for c in result.commands] == [(("rm", "-rf", "x"), True)]
    assert not result.read_only


@pytest.mark.parametrize(
    ("command", "final"),
    [
        ("grep x f", ("grep", "x", "f")),
        ("ls | grep x", ("grep", "x")),
        ("cd a && timeout 5 rg x", ("rg", "x")),
        ("grep x f; echo done", ("echo", "done")),
        ("! grep x f", ()),
        ("if true; then grep x f; fi", ()),
        ("grep x f &", ("grep", "x", "f")),
        ("grep -c x <<'EOF'\nline\nEOF", ("grep", "-c", "x")),
    ],
)
def test_final_command_is_the_one_whose_status_counts(command: str, final: tuple[str, ...]) -> None:
    assert classify(command).final_argv == final


def test_heredoc_body_is_not_taken_for_commands() -> None:
    result = classify("cat <<'EOF' | wc -l\nrm -rf /\n$(reboot)\nEOF")
    assert [c.argv for c in result.commands] == [("cat",), ("wc", "-l")]
    assert result.read_only
    assert result.commands[0].text == "cat <<'EOF'"
    assert result.commands[0].redirects[0].target == ""


def test_git_commit_with_a_heredoc_message_parses() -> None:
    command = "git commit -m \"$(cat <<'EOF'\nFix the thing\n\nDetails.\nEOF\n)\""
    result = classify(command)
    assert result.parsed
    assert [c.argv[0] for c in result.commands] == ["cat", "git"]
    assert not result.read_only


def test_results_are_cached_and_immutable() -> None:
    first = classify("ls -la")
    assert classify("ls -la") is first
    with pytest.raises(AttributeError):
        first.read_only = False  # type: ignore[misc]


@pytest.mark.parametrize("command", ["'rm' '-rf' '/tmp/x'", '"rm" "-rf" "/"', "'touch' 'f'", "'rm' \\\n '/tmp/x'"])
def test_a_command_of_quoted_words_only_is_a_command(command: str) -> None:
    # Every character is quoted (or a line continuation), none unquoted code: that is still a command that runs.
    result = classify(command)
    assert not result.read_only and result.commands and result.commands[0].argv[0] in ("rm", "touch")
    assert parse(command, scan(command)).commands  # bashlex's way too, not only the plain one


@pytest.mark.parametrize("command", ["", "  \n\t", "# only a comment", "\\\n", "# a\n\n  # b\n"])
def test_blank_lines_and_comments_run_nothing(command: str) -> None:
    result = classify(command)
    assert result.read_only and result.commands == ()
