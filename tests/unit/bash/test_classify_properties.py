"""Properties: whatever a writing command is joined to or nested in, the whole is never read-only."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.bash.classify import classify

READ_ONLY_LEAVES = [
    "ls",
    "ls -la src",
    "pwd",
    "true",
    "echo hi",
    "cat README.md",
    "head -n 3 f.txt",
    "wc -l f.txt",
    "grep -rn TODO .",
    "rg foo src",
    "git status",
    "git log --oneline -5",
    "git diff --stat",
    "sed -n 1,5p f.txt",
    "awk '{print $1}' f.txt",
    "jq .name package.json",
    "find . -name '*.py'",
    "sort f.txt",
    "date +%s",
    "test -f x",
    "[ -d y ]",
    "LANG=C ls",
    "timeout 5 git status",
]

WRITING_LEAVES = [
    "rm x",
    "touch y",
    "echo a > out",
    "ls >> log",
    "mkdir d",
    "cp a b",
    "mv a b",
    "git push",
    "git commit -m msg",
    "sed -i s/a/b/ f",
    "sed 's/a/b/w out' f",
    "find . -delete",
    "find . -exec rm {} +",
    "sort -o o f",
    "tee t",
    "npm install",
    "python -c 1",
    "eval ls",
    "PATH=/tmp ls",
    "export X=1",
    "awk '{print > \"f\"}' f",
    "git -c core.pager=x log",
    "./ls",
    "xargs rm",
    "{ ls; } > out",
]

BINARY = ["{a} ; {b}", "{a} && {b}", "{a} || {b}", "{a} | {b}", "{a} |& {b}", "{a} & {b}", "{a}\n{b}"]
UNARY = [
    "( {a} )",
    "{{ {a}; }}",
    "{{ ! {a}; }}",
    "if {a}; then true; fi",
    "if true; then {a}; fi",
    "if false; then true; else {a}; fi",
    "while {a}; do break; done",
    "until {a}; do break; done",
    "for i in a b; do {a}; done",
    "{a} 2>&1",
    "{a} > /dev/null",
]
SUBSTITUTING = ["echo $({a})", "echo `{a}`", "cat <({a})", 'echo "x $({a}) y"']


def combine(leaves: st.SearchStrategy[str], with_substitution: bool) -> st.SearchStrategy[str]:
    unary = UNARY + (SUBSTITUTING if with_substitution else [])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.builds(lambda t, a: t.format(a=a), st.sampled_from(unary), inner),
            st.builds(lambda t, a, b: t.format(a=a, b=b), st.sampled_from(BINARY), inner, inner),
        )

    return st.recursive(leaves, extend, max_leaves=4)


def _with_writer(draw: st.DrawFn) -> str:
    writer = draw(st.sampled_from(WRITING_LEAVES))
    tree = draw(combine(st.sampled_from(READ_ONLY_LEAVES), with_substitution=True))
    place = draw(st.sampled_from(BINARY + UNARY + SUBSTITUTING))
    other = draw(st.sampled_from(READ_ONLY_LEAVES))
    first = draw(st.booleans())
    if "{b}" in place:
        a, b = (writer, tree) if first else (tree, writer)
        return place.format(a=a, b=b)
    joined = place.format(a=writer)
    glue = draw(st.sampled_from(BINARY))
    return glue.format(a=joined, b=other) if first else glue.format(a=other, b=joined)


@st.composite
def with_a_writer(draw: st.DrawFn) -> str:
    return _with_writer(draw)


@settings(max_examples=examples(200), deadline=None)
@given(with_a_writer())
def test_a_writing_part_is_never_hidden(command: str) -> None:
    result = classify(command)
    assert not result.read_only, f"{command!r} was classified read-only: {result.reason}"


@settings(max_examples=examples(300), deadline=None)
@given(combine(st.sampled_from(READ_ONLY_LEAVES), with_substitution=False))
def test_read_only_parts_joined_without_substitution_stay_read_only(command: str) -> None:
    result = classify(command)
    assert result.read_only, f"{command!r}: {result.reason}"


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(READ_ONLY_LEAVES), st.sampled_from(SUBSTITUTING))
def test_any_substitution_makes_it_not_read_only(leaf: str, template: str) -> None:
    result = classify(template.format(a=leaf))
    assert not result.read_only
    assert result.has_substitution


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_arbitrary_text_never_raises_and_read_only_needs_a_clean_parse(command: str) -> None:
    result = classify(command)
    if result.read_only:
        assert result.parsed
        assert result.raw_check_failures == ()
        assert not result.has_substitution
        assert result.write_targets == ()


UNCLOSED_BRACE_FOUND = "?'\"|\" <\t>;*?}${;'|"


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="ab $'\"\\;|&<>(){}`#*?[]=-\n\t", max_size=40))
@example(UNCLOSED_BRACE_FOUND)  # bashlex looped on it (see the test below)
def test_shell_punctuation_soup_never_raises(command: str) -> None:
    result = classify(command)
    assert result.command == command


def test_a_quoted_brace_never_closed_is_refused_not_looped_on() -> None:
    # Found by `make fuzz` (the soup above): bashlex 0.18 loops forever on a word holding a single-quoted `${`
    # after other characters with no `}` after it. A child process, so that a loop fails the test instead of
    # hanging it (subprocess.run kills the child when the time is up).
    commands = [UNCLOSED_BRACE_FOUND, "echo a'${'b", "ls x'${' '}'"]
    probe = "import sys\nfrom toolgate.bash.classify import classify\nfor c in sys.argv[1:]: classify(c)"
    subprocess.run([sys.executable, "-c", probe, *commands], check=True, timeout=60)
    for command in commands:
        result = classify(command)
        assert not result.read_only and not result.parsed
        assert result.reason is not None and "matching '}'" in result.reason, result.reason
