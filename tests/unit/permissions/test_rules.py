"""Tables for the rule grammar, path patterns, command matching and code-execution detection."""

from __future__ import annotations

import pytest

from toolgate.permissions.patterns import PatternError, compile_pattern
from toolgate.permissions.rules import (
    RuleError,
    command_words_match,
    domain_matches,
    glob_matches,
    is_code_execution_rule,
    parse_rule,
)


@pytest.mark.parametrize(
    ("text", "tool", "kind", "detail"),
    [
        ("Bash", "Bash", "tool", ""),
        ("Bash()", "Bash", "tool", ""),
        ("Bash(*)", "Bash", "tool", ""),
        ("Bash(git log:*)", "Bash", "prefix", ("git", "log")),
        ("Bash(npm run test)", "Bash", "exact", ("npm", "run", "test")),
        ("Bash(git commit -m 'two words')", "Bash", "exact", ("git", "commit", "-m", "two words")),
        ("Bash(git * --oneline)", "Bash", "glob", "git * --oneline"),
        ("Bash(echo \\(hi\\))", "Bash", "exact", ("echo", "(hi)")),
        ("Bash(printf a\\\\b)", "Bash", "exact", ("printf", "ab")),  # `\\` → `\`, then shell quoting removes it
        ("Bash(echo \\*)", "Bash", "exact", ("echo", "*")),  # an escaped star is not a glob
        ("Read(src/**)", "Read", "path", "src/**"),
        ("Edit(./.env)", "Edit", "path", "./.env"),
        ("Read(~/notes/**)", "Read", "path", "~/notes/**"),
        ("Read(//etc/hosts)", "Read", "path", "//etc/hosts"),
        ("WebFetch(domain:Example.COM)", "WebFetch", "domain", "example.com"),
        ("WebFetch(domain:*.example.com)", "WebFetch", "domain", "*.example.com"),
        ("mcp__github__create_issue", "mcp__github__create_issue", "tool", ""),
        ("Write", "Write", "tool", ""),
        ("Glob", "Glob", "tool", ""),
    ],
)
def test_valid_rules_parse(text: str, tool: str, kind: str, detail: object) -> None:
    rule = parse_rule(text)
    assert (rule.text, rule.tool, rule.kind) == (text, tool, kind)
    if isinstance(detail, tuple):
        assert rule.words == detail
    elif detail:
        assert rule.specifier == detail


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        (" Bash", "spaces"),
        ("Bash(git log", "not closed"),
        ("Bash(git log))", "unescaped"),
        ("Bash(git log\\)", "escaped"),
        ("Bash)", "without a matching"),
        ("(git log)", "not a tool name"),
        ("Ba sh", "not a tool name"),
        ("Bash(:*)", "prefix before ':*' is empty"),
        ("Bash(git * log:*)", "cannot also contain"),
        ("Bash(echo 'unterminated)", "cannot be split"),
        ("Bash(ls\nrm -rf /)", "line break"),
        ("Read(!secret)", "negated"),
        ("Read(../up/**)", "'..'"),
        ("Read(~bob/x)", "~user"),
        ("Read(src/[ab)", "no closing"),
        ("WebFetch(example.com)", "domain:"),
        ("WebFetch(domain:exa mple.com)", "not a host"),
        ("WebFetch(domain:example.com:8080)", "names a port"),
        ("WebFetch(domain:*.10.0.0.1)", "not of an IP address"),
        ("WebFetch(domain:a*.example.com)", "leading '*.'"),
        ("WebFetch(domain:*)", "leading '*.'"),
        ("Glob(src/**)", "Read(src/**)"),
        ("Write(src/**)", "Edit(src/**)"),
        ("TodoWrite(anything)", "take no specifier"),
    ],
)
def test_invalid_rules_are_refused_with_a_reason(text: str, why: str) -> None:
    with pytest.raises(RuleError, match=None) as info:
        parse_rule(text)
    assert why in str(info.value)


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(git log:*)", ["git", "log"], True),
        ("Bash(git log:*)", ["git", "log", "--oneline"], True),
        ("Bash(git log:*)", ["git", "logs"], False),
        ("Bash(git log:*)", ["git"], False),
        ("Bash(ls:*)", ["lsof"], False),  # the prefix ends at a word boundary
        ("Bash(ls:*)", ["ls", "-la"], True),
        ("Bash(npm run test)", ["npm", "run", "test"], True),
        ("Bash(npm run test)", ["npm", "run", "test", "--", "-x"], False),
        ("Bash(npm run test)", ["npm", "run", "tests"], False),
        ("Bash(git commit -m 'a b')", ["git", "commit", "-m", "a b"], True),
        ('Bash(git commit -m "a b")', ["git", "commit", "-m", "a b"], True),  # quoting style does not matter
        ("Bash(git commit -m 'a b')", ["git", "commit", "-m", "a", "b"], False),
        ("Bash(git * --oneline)", ["git", "log", "--oneline"], True),
        ("Bash(git * --oneline)", ["git", "log", "-p"], False),
        ("Bash(git *)", ["git"], True),  # a trailing ` *` also covers the bare command
        ("Bash(git *)", ["gitk"], False),
        ("Bash(echo \\*)", ["echo", "*"], True),
        ("Bash(echo \\*)", ["echo", "x"], False),
    ],
)
def test_command_matching(rule: str, command: list[str], expected: bool) -> None:
    assert command_words_match(parse_rule(rule), command) is expected


def test_deny_matching_can_ignore_case() -> None:
    rule = parse_rule("Bash(rm:*)")
    assert not command_words_match(rule, ["RM", "-rf", "x"])
    assert command_words_match(rule, ["RM", "-rf", "x"], ignore_case=True)


def test_glob_matches_a_literal_star_only_when_escaped() -> None:
    assert glob_matches("a \\* b", "a * b")
    assert not glob_matches("a \\* b", "a x b")
    assert glob_matches("a * b", "a x y b")


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/**", "src", True),
        ("src/**", "src/a/b.py", True),
        ("src/**", "srcx/a.py", False),
        ("src/**", "lib/src/a.py", False),  # a slash anchors the pattern at the root
        ("src", "lib/src/a.py", True),  # no slash: any depth, and everything below
        ("*.env", ".env", True),
        ("*.env", "config/prod.env", True),
        ("*.env", "config/prod.envy", False),
        ("./.env", ".env", True),
        ("./.env", "sub/.env", False),
        ("/.env", "sub/.env", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b/c", True),
        ("a/*/b", "a/x/y/b", False),  # `*` never crosses a slash
        ("f?.txt", "fa.txt", True),
        ("f?.txt", "f/.txt", False),
        ("f[ab].txt", "fb.txt", True),
        ("f[!ab].txt", "fc.txt", True),
        ("f[!ab].txt", "fa.txt", False),
        ("**", "", True),
        ("/", "anything/at/all", True),
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
    ],
)
def test_path_patterns(pattern: str, path: str, expected: bool) -> None:
    assert compile_pattern(pattern).matches(path) is expected


def test_path_patterns_can_ignore_case() -> None:
    pattern = compile_pattern(".env")
    assert not pattern.matches(".ENV")
    assert pattern.matches(".ENV", ignore_case=True)


@pytest.mark.parametrize("bad", ["", "!x", "a/../b", "x\x00y", "[abc"])
def test_unusable_patterns(bad: str) -> None:
    with pytest.raises(PatternError):
        compile_pattern(bad)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("Bash", True),
        ("Bash(*)", True),
        ("Bash(python:*)", True),
        ("Bash(python3 -c:*)", True),
        ("Bash(python3.12:*)", True),
        ("Bash(/usr/bin/python3:*)", True),
        ("Bash(node:*)", True),
        ("Bash(npm run:*)", True),
        ("Bash(yarn run:*)", True),
        ("Bash(bash:*)", True),
        ("Bash(sh -c:*)", True),
        ("Bash(env:*)", True),
        ("Bash(xargs:*)", True),
        ("Bash(sudo:*)", True),
        ("Bash(eval:*)", True),
        ("Bash(ssh:*)", True),
        ("Bash(npx:*)", True),
        ("Bash(find:*)", True),
        ("Bash(python *)", True),
        ("Bash(pyth*)", True),
        ("Bash(* --version)", True),
        ("Bash(python -m pytest:*)", False),
        ("Bash(npm run test:*)", False),
        ("Bash(bash scripts/ci.sh:*)", False),
        ("Bash(python script.py)", False),  # exact: one script, as written
        ("Bash(git log:*)", False),
        ("Bash(npm:*)", True),
        ("Bash(git:*)", True),
        ("Bash(docker:*)", True),
        ("Bash(ls:*)", False),
        ("Read(src/**)", False),
        ("Edit", False),
    ],
)
def test_code_execution_rules(rule: str, expected: bool) -> None:
    assert is_code_execution_rule(parse_rule(rule)) is expected


@pytest.mark.parametrize(
    ("rule", "host", "expected"),
    [
        ("WebFetch(domain:example.com)", "example.com", True),
        ("WebFetch(domain:example.com)", "EXAMPLE.com.", True),
        ("WebFetch(domain:example.com)", "api.example.com", False),
        ("WebFetch(domain:example.com)", "example.com.evil.net", False),
        ("WebFetch(domain:*.example.com)", "api.example.com", True),
        ("WebFetch(domain:*.example.com)", "example.com", False),  # subdomains only
        ("WebFetch(domain:*.example.com)", "a.b.example.com", True),
        ("WebFetch(domain:*.example.com)", "badexample.com", False),
        ("WebFetch(domain:example.com)", "evil-example.com", False),
        ("WebFetch(domain:*.example.com)", "evil-example.com", False),
        ("WebFetch(domain:bücher.example)", "xn--bcher-kva.example", True),
        ("WebFetch(domain:xn--bcher-kva.example)", "BÜCHER.example", True),
        ("WebFetch(domain:127.0.0.1)", "2130706433", True),
        ("WebFetch(domain:[::1])", "::1", True),
    ],
)
def test_domains(rule: str, host: str, expected: bool) -> None:
    assert domain_matches(parse_rule(rule), host) is expected


@pytest.mark.parametrize(
    ("rule", "tool", "expected"),
    [
        ("Edit", "Write", True),
        ("Edit", "ApplyPatch", True),
        ("Edit", "Read", False),
        ("Read", "Grep", True),
        ("Read", "Glob", True),
        ("Write", "Edit", False),
        ("mcp__github", "mcp__github__create_issue", True),
        ("mcp__github", "mcp__githubx__create_issue", False),
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
        ("mcp__github__create_issue", "mcp__github__delete_repo", False),
    ],
)
def test_which_tools_a_rule_is_about(rule: str, tool: str, expected: bool) -> None:
    assert parse_rule(rule).covers_tool(tool) is expected
