"""Properties of the engine over generated commands, rules and modes:

- adding an allow rule for X never allows something X does not cover;
- a deny rule that matches any part of a call always wins, whatever else is allowed and whatever the mode.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.properties import examples
from tests.unit.permissions.helpers import make_runtime

from toolgate.bash.classify import classify as CLASSIFIER
from toolgate.core.permission import PermissionMode
from toolgate.permissions.rules import parse_rule

PROGRAMS = ["git", "ls", "cat", "make", "rm", "curl", "echo", "npm", "python", "touch", "grep", "sudo", "timeout 5"]
ARGS = [
    "log",
    "status",
    "-la",
    "a.txt",
    "src",
    "--output=f",
    "x",
    "run",
    "build",
    "/etc/passwd",
    "../up",
    "-rf",
    "'a b'",
]
OPERATORS = [" && ", " ; ", " | ", " || "]
TAILS = ["", "", " > out.txt", " 2>&1", " < a.txt", " >> ../log"]

simple = st.builds(
    lambda program, args, tail: " ".join([program, *args]) + tail,
    st.sampled_from(PROGRAMS),
    st.lists(st.sampled_from(ARGS), max_size=3),
    st.sampled_from(TAILS),
)


@st.composite
def commands(draw: st.DrawFn) -> str:
    parts = draw(st.lists(simple, min_size=1, max_size=3))
    text = parts[0]
    for part in parts[1:]:
        text += draw(st.sampled_from(OPERATORS)) + part
    if draw(st.booleans()) and draw(st.booleans()):
        text = text.replace("x", "$(rm -rf x)", 1)
    return text


@st.composite
def bash_rules(draw: st.DrawFn) -> str:
    words = [draw(st.sampled_from(PROGRAMS)).split()[0], *draw(st.lists(st.sampled_from(ARGS), max_size=2))]
    spec = shlex.join(shlex.split(" ".join(words)))
    kind = draw(st.sampled_from(["prefix", "exact", "glob"]))
    text = {"prefix": f"Bash({spec}:*)", "exact": f"Bash({spec})", "glob": f"Bash({spec} *)"}[kind]
    parse_rule(text)
    return text


MODES = st.sampled_from(list(PermissionMode))
EXTRA_RULES = st.lists(
    st.sampled_from(["Bash(git log:*)", "Bash(ls:*)", "Read(//etc/**)", "Edit(/out.txt)"]), max_size=3
)


@pytest.fixture(scope="module")
def workspace_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as root:
        ws = Path(root) / "ws"
        (ws / "src").mkdir(parents=True)
        (ws / "a.txt").write_text("a")
        yield ws


def decide(workspace: Path, command: str, mode: PermissionMode, **rules: list[str]) -> str:
    async def run() -> str:
        rt = make_runtime(workspace, mode=mode, classifier=CLASSIFIER, **rules)  # type: ignore[arg-type]
        try:
            return (await rt.check("Bash", {"command": command})).decision
        finally:
            await rt.aclose()

    return anyio.run(run)


def _starts_with_rule(command: str, rule_text: str) -> bool:
    """Whether any simple command of `command` (any way it may be read) begins with the rule's words."""
    rule = parse_rule(rule_text)
    head = rule.words or tuple(shlex.split(rule.specifier.split("*", 1)[0]))
    classification = CLASSIFIER(command)
    forms = [f for c in classification.commands for f in (tuple(c.argv), tuple(c.effective_argv))]
    return not classification.parsed or any(f[: len(head)] == head for f in forms)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands(), rule=bash_rules(), mode=MODES, extra=EXTRA_RULES)
def test_an_allow_rule_never_allows_what_it_does_not_cover(
    workspace_dir: Path, command: str, rule: str, mode: PermissionMode, extra: list[str]
) -> None:
    assume(not _starts_with_rule(command, rule))
    before = decide(workspace_dir, command, mode, allow=extra)
    after = decide(workspace_dir, command, mode, allow=[*extra, rule])
    assert after == before, (command, rule)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands(), mode=MODES, extra=EXTRA_RULES)
def test_an_allow_rule_for_one_part_never_allows_an_unknown_other_part(
    workspace_dir: Path, command: str, mode: PermissionMode, extra: list[str]
) -> None:
    first = CLASSIFIER(command).commands
    assume(first and first[0].argv)
    rule = f"Bash({shlex.join(first[0].argv[:1])}:*)"
    compound = f"{command} && frobnicate --all"  # a program nobody allowed and nobody knows
    assume(mode is not PermissionMode.BYPASS)
    assert decide(workspace_dir, compound, mode, allow=[*extra, rule]) != "allow"


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands(), mode=MODES, extra=EXTRA_RULES, data=st.data())
def test_a_deny_rule_always_wins(
    workspace_dir: Path, command: str, mode: PermissionMode, extra: list[str], data: st.DataObject
) -> None:
    parts = [c for c in CLASSIFIER(command).commands if c.argv]
    assume(parts)
    target = data.draw(st.sampled_from(parts))
    width = data.draw(st.integers(min_value=1, max_value=len(target.argv)))
    deny = f"Bash({shlex.join(target.argv[:width]).replace('(', chr(92) + '(').replace(')', chr(92) + ')')}:*)"
    assume("*" not in deny[:-3])
    everything = ["Bash", *extra, "Bash(*)", "Read", "Edit"]
    assert decide(workspace_dir, command, mode, allow=everything, deny=[deny]) == "deny", (command, deny)


PATHS = st.sampled_from(["a.txt", "src/x.py", "/etc/passwd", "../up.txt", ".git/config", ".env", "src/../a.txt"])


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=PATHS, mode=MODES, tool=st.sampled_from(["Read", "Write", "Edit", "Grep"]))
def test_a_path_deny_rule_always_wins(workspace_dir: Path, path: str, mode: PermissionMode, tool: str) -> None:
    absolute = Path(path) if path.startswith("/") else (workspace_dir / path).resolve()
    family = "Read" if tool in ("Read", "Grep") else "Edit"
    deny = f"{family}(/{absolute})"
    tool_input = {"pattern": "x", "path": path} if tool == "Grep" else {"file_path": path}

    async def run() -> str:
        rt = make_runtime(workspace_dir, mode=mode, allow=["Read", "Edit", "Write", "Grep"], deny=[deny])
        try:
            return (await rt.check(tool, tool_input)).decision
        finally:
            await rt.aclose()

    assert anyio.run(run) == "deny"
