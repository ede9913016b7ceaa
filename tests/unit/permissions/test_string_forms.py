"""The decision's path steps on strings decide exactly as the `Path`-based steps they replaced.

Coverage (`_path_allowed`, `inside_any`) and the credential checks (`protected_read`, `_reads_home_tree`) compare
a path's resolved forms as strings and resolve the working directories' real paths only when a form is outside
their forms as given. The references below are those steps as they were (every form a `Path`, every directory
resolved up front); the property runs Read, Glob and Grep calls through the whole engine both ways, over paths
with `..`, `~` and symbolic links (out of the workspace, into it, to the home directory, a workspace reached
through a link), rules that match and rules that do not, every mode, with and without the runner's pins, and
asks for the same evaluation: verdict, reason, stage, rule and suggestions.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.properties import examples

from toolgate.core.context import HOME_DIR
from toolgate.core.credentials import credential_reason
from toolgate.core.messages import ToolUse
from toolgate.core.paths import Resolutions, inside_any, is_within, resolved_forms, resolved_texts, texts_inside
from toolgate.core.permission import NonInteractiveApprover, PermissionMode
from toolgate.permissions import coverage, ladder, safety
from toolgate.permissions.coverage import Coverage
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.ladder import Evaluation
from toolgate.permissions.ladder_input import LadderInput
from toolgate.permissions.sources import RuleEntry
from toolgate.runtime import RuntimeOptions, build_runtime
from toolgate.tools import builtin_tools

# --- the steps as they were: every form a Path, every working directory resolved first -------------------------


def _reference_inside_any(path: Path, directories: Sequence[Path], resolved: Resolutions | None = None) -> bool:
    resolved = {} if resolved is None else resolved
    roots = [form for d in directories for form in resolved_forms(d, resolved)]
    return all(any(is_within(form, root) for root in roots) for form in resolved_forms(path, resolved))


def _reference_path_allowed(
    path: Path, tools: tuple[str, ...], inp: LadderInput, cov: Coverage, *, inside_is_enough: bool
) -> bool:
    roots = [form for d in inp.working_dirs for form in inp.forms(d)]
    used: list[RuleEntry] = []
    for form in inp.forms(path):
        entry = next(
            (
                e
                for e in inp.book.of("allow")
                if e.rule.kind == "path"
                and e.rule.tool in tools
                and e.matches_path(form)
                and coverage._honoured(e, inp, cov)
            ),
            None,
        )
        if entry is not None:
            used.append(entry)
        elif not (inside_is_enough and any(is_within(form, root) for root in roots)):
            return False
    cov.rules.extend(e for e in used if e not in cov.rules)
    return True


def _reference_protected_read(path: Path, resolved: Resolutions | None = None) -> str | None:
    for form in resolved_forms(path, resolved):
        reason = credential_reason(form)
        if reason is not None:
            return reason
    return None


def _reference_reads_home_tree(
    path: Path, home: Path, recursive: bool, resolved: Resolutions | None = None
) -> str | None:
    if not recursive:
        return None
    homes = resolved_forms(home, resolved)
    if any(is_within(h, form) for form in resolved_forms(path, resolved) for h in homes):
        return f"it reads everything below {path}, which holds the home directory's credentials (~/.ssh, ~/.aws, ...)"
    return None


@contextlib.contextmanager
def _reference_steps() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(coverage, "_path_allowed", _reference_path_allowed)
        patch.setattr(coverage, "inside_any", _reference_inside_any)
        patch.setattr(ladder, "inside_any", _reference_inside_any)
        patch.setattr(safety, "protected_read", _reference_protected_read)
        patch.setattr(safety, "_reads_home_tree", _reference_reads_home_tree)
        yield


# --- a tree with links every way ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tree:
    root: Path
    ws: Path
    ws_link: Path  # a link to ws: a workspace reached through a symbolic link
    outside: Path
    home: Path


@pytest.fixture(scope="module")
def tree() -> Iterator[Tree]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(os.path.realpath(tmp))
        ws, outside, home = root / "ws", root / "outside", root / "home"
        for directory in (ws / "src", ws / ".ssh", outside / ".ssh", home / ".ssh", home / ".aws"):
            directory.mkdir(parents=True)
        for file in (
            ws / "a.txt", ws / "src" / "b.py", ws / ".env", ws / ".ssh" / "id_rsa", outside / "secret.txt",
            outside / ".ssh" / "id_rsa", home / ".ssh" / "id_rsa", home / ".aws" / "credentials", home / "notes.txt",
        ):  # fmt: skip
            file.write_text("x")
        (ws / "link_out").symlink_to(outside)
        (ws / "link_in").symlink_to(ws / "src")
        (ws / "link_home").symlink_to("../home")  # relative target
        (ws / "src" / "up").symlink_to(root)  # a link that climbs out above the workspace
        (ws / "key").symlink_to(home / ".ssh" / "id_rsa")
        (ws / "dangling").symlink_to(root / "nowhere")
        (outside / "back").symlink_to(ws)
        (outside / "home_link").symlink_to(home)  # a home directory reached through a link
        (root / "ws_link").symlink_to(ws)
        yield Tree(root, ws, root / "ws_link", outside, home)


_SEGMENTS = [
    "a.txt", "src", "b.py", "..", ".", "link_out", "link_in", "link_home", "key", "dangling", "up", "back",
    ".env", ".ssh", "id_rsa", ".aws", "credentials", "outside", "ws", "ws_link", "home", "secret.txt", "missing",
]  # fmt: skip
# Each lead names a directory by itself (a search's root), and leads on to the segments below it.
_LEADS = ["", "", "./", "~/", "~", "{root}/", "{root}/ws/", "{root}/ws_link/", "/", "{root}/home/", "{root}/outside/"]
_RULES = [
    "Read(src/**)", "Read(*.txt)", "Read(//{root}/outside/**)", "Read(~/**)", "Read(~/.ssh/**)", "Read(./.env)",
    "Read(link_out/**)", "Read(//{root}/home/**)", "Edit(src/**)", "Edit(//{root}/outside/**)", "Read", "Grep",
    "Glob", "Read(//**)", "Read(/ws/**)", "Read(SRC/**)",
]  # fmt: skip

raw_paths = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(_LEADS),
    st.lists(st.sampled_from(_SEGMENTS), max_size=3),
)
rule_lists = st.lists(st.sampled_from(_RULES), max_size=2)


@dataclass(frozen=True)
class Setup:
    tool: str
    raw: str
    workspace: str  # "ws" or "ws_link"
    add_dirs: tuple[str, ...]
    allow: tuple[str, ...]
    ask: tuple[str, ...]
    deny: tuple[str, ...]
    mode: PermissionMode
    pinned: bool
    home: str = "home"  # or "outside/home_link"


setups = st.builds(
    Setup,
    tool=st.sampled_from(["Read", "Glob", "Grep"]),
    raw=raw_paths,
    workspace=st.sampled_from(["ws", "ws", "ws_link"]),
    add_dirs=st.lists(st.sampled_from(["outside", "ws/link_out", "home", "ws_link"]), max_size=2).map(tuple),
    allow=rule_lists.map(tuple),
    ask=st.lists(st.sampled_from(_RULES), max_size=1).map(tuple),
    deny=st.lists(st.sampled_from(_RULES), max_size=1).map(tuple),
    mode=st.sampled_from(list(PermissionMode)),
    pinned=st.booleans(),
    home=st.sampled_from(["home", "outside/home_link"]),
)


def _evaluate_both(tree: Tree, setup: Setup) -> tuple[Evaluation, Evaluation]:
    def rules(texts: Sequence[str]) -> list[str]:
        return [text.replace("{root}", str(tree.root).lstrip("/")) for text in texts]  # `//` + the root

    raw = setup.raw.replace("{root}", str(tree.root))
    workspace, home = tree.root / setup.workspace, tree.root / setup.home
    engine = PermissionEngine(
        workspace,
        home=home,
        cli_rules={"allow": rules(setup.allow), "ask": rules(setup.ask), "deny": rules(setup.deny)},
        read_settings_files=False,
    )
    options = RuntimeOptions(
        mode=setup.mode,
        additional_dirs=[tree.root / d for d in setup.add_dirs],
        policy=engine,
        tools=builtin_tools(),
        dependencies={HOME_DIR: home},
    )
    field = "file_path" if setup.tool == "Read" else "path"
    tool_input = {field: raw, **({} if setup.tool == "Read" else {"pattern": "x"})}

    async def run() -> tuple[Evaluation, Evaluation]:
        rt = build_runtime(workspace, NonInteractiveApprover(), options)
        try:
            prepared = rt.runner.prepare(ToolUse(id="t", name=setup.tool, input=tool_input))
            assert prepared.tool is not None and prepared.tool_input is not None, prepared.error
            results = []
            for reference in (False, True):
                ctx = rt.runner.new_context("t")
                if setup.pinned:
                    with contextlib.suppress(Exception):
                        ctx.pin_paths(prepared.tool.paths(prepared.tool_input, ctx))
                with _reference_steps() if reference else contextlib.nullcontext():
                    results.append(await engine.evaluate(prepared.tool, prepared.tool_input, ctx))
                await ctx.deps.aclose()
            return results[0], results[1]
        finally:
            await rt.aclose()

    return anyio.run(run)


_LINKED_HOME_TREE = Setup(
    "Grep", "{root}/home", "ws", (), (), (), (), PermissionMode.DEFAULT, True, home="outside/home_link"
)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(setup=setups)
@example(setup=_LINKED_HOME_TREE)  # the tree holds the home directory's real path only, not the link to it
def test_the_string_steps_decide_as_the_path_steps_they_replaced(tree: Tree, setup: Setup) -> None:
    fast, reference = _evaluate_both(tree, setup)
    assert fast == reference, setup


def test_the_property_meets_every_kind_of_answer(tree: Tree) -> None:
    # The generated cases are worth little if they all answer alike: these reach each way a Read can go.
    cases = {
        "inside": Setup("Read", "a.txt", "ws", (), (), (), (), PermissionMode.DEFAULT, True),
        "through a link out": Setup("Read", "link_out/secret.txt", "ws", (), (), (), (), PermissionMode.DEFAULT, True),
        "credentials": Setup("Read", "key", "ws", (), (), (), (), PermissionMode.DEFAULT, False),
        "home tree": Setup("Grep", "~", "ws", ("home",), (), (), (), PermissionMode.DEFAULT, True),
        "linked home's tree": _LINKED_HOME_TREE,
        "allowed out": Setup(
            "Read", "link_out/secret.txt", "ws", (), ("Read(//{root}/outside/**)",), (), (), PermissionMode.PLAN, True
        ),
        "linked workspace": Setup("Read", "{root}/ws/a.txt", "ws_link", (), (), (), (), PermissionMode.DEFAULT, True),
    }
    answers = {name: _evaluate_both(tree, setup) for name, setup in cases.items()}
    for name, (fast, reference) in answers.items():
        assert fast == reference, name
    assert answers["inside"][0].stage == "mode" and answers["inside"][0].behavior == "allow"
    assert answers["through a link out"][0].stage == "ask"
    assert answers["credentials"][0].stage == "safety"
    assert answers["home tree"][0].stage == "safety"
    assert answers["linked home's tree"][0].stage == "safety"
    assert answers["allowed out"][0].stage == "allow_rule"
    assert answers["linked workspace"][0].behavior == "allow"


# --- containment on strings, directly ---------------------------------------------------------------------------

_DIRS = [
    "ws", "ws_link", "outside", "ws/link_out", "ws/src", "home", "ws/dangling", "missing", "ws/src/up",
    "ws/link_out/..",
]  # fmt: skip


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    raw=raw_paths,
    dirs=st.lists(st.sampled_from(_DIRS), max_size=3),
    warm=st.booleans(),
)
def test_texts_inside_answers_as_comparing_every_form(tree: Tree, raw: str, dirs: list[str], warm: bool) -> None:
    text = raw.replace("{root}", str(tree.root)).replace("~", str(tree.home), 1)
    path = Path(os.path.normpath(tree.ws / text))
    directories = [tree.root / d for d in dirs]
    memo: Resolutions = {}
    if warm:  # a memo that already holds the directories (a decision's earlier steps resolved them)
        for d in directories:
            resolved_texts(d, memo)
    expected = _reference_inside_any(path, directories)
    assert texts_inside(resolved_texts(path, memo), directories, memo) == expected
    assert inside_any(path, directories) == expected
