"""Safety checks in every mode (no mode, allow rule or tool approval skips them), and escapes through
symlinks and `..`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from tests.unit.permissions.helpers import bash, check, make_runtime

from toolgate.core.permission import PermissionMode
from toolgate.permissions.safety import (
    TOOLGATE_INSTRUCTIONS,
    case_variants,
    loader_spellings,
    protected_write,
    suspicious_form,
)
from toolgate.runtime import Runtime

MODES = list(PermissionMode)
EVERYTHING = ["Edit", "Edit(/**)", "Edit(//**)", "Bash", "Bash(tee:*)", "Bash(cp:*)", "Scribe"]

PROTECTED = [
    ".git/config",
    ".git/hooks/pre-commit",
    "vendor/lib/.git/hooks/post-checkout",
    ".GIT/hooks/pre-commit",  # case-insensitive file systems
    ".vscode/settings.json",
    ".vscode/tasks.json",
    ".idea/workspace.xml",
    ".toolgate/settings.json",
    ".toolgate/settings.local.json",
    ".toolgate/anything-else",
    ".gitconfig",
    ".gitmodules",
    "sub/.gitmodules",
    ".mcp.json",
    ".envrc",
    "~/.bashrc",
    "~/.bash_profile",
    "~/.zshrc",
    "~/.zprofile",
    "~/.profile",
    "~/.gitconfig",
    "~/.ssh/authorized_keys",
    "~/.config/git/config",
    "~/.config/fish/config.fish",
    "{xdg}/toolgate/settings.json",
    "{flags}",
    "src/../.git/config",
    "notes.txt.",  # a trailing dot names notes.txt on Windows
    "PROGRA~1/x.txt",
    "con.txt",
    "//server/share/x.txt",
]


@pytest.fixture
async def rt_for(workspace: Path, tmp_path: Path) -> AsyncIterator[Callable[[PermissionMode], Runtime]]:
    made: list[Runtime] = []
    flags = tmp_path / "ci-settings.json"
    flags.write_text(json.dumps({"permissions": {"allow": []}}))

    def factory(mode: PermissionMode) -> Runtime:
        rt = make_runtime(workspace, mode=mode, allow=EVERYTHING, settings_files=[flags], read_settings=True)
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.aclose()


def _path(template: str, tmp_path: Path, workspace: Path) -> str:
    home = workspace.parent / "home"
    text = template.format(xdg=tmp_path.parent / "xdg-is-not-used", flags=tmp_path / "ci-settings.json")
    return str(home) + text[1:] if text.startswith("~") else text


@pytest.mark.parametrize("mode", MODES)
async def test_protected_writes_ask_in_every_mode(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode, tmp_path: Path, workspace: Path
) -> None:
    import os

    rt = rt_for(mode)
    xdg = Path(os.environ["XDG_CONFIG_HOME"])  # set for every test by the shared conftest
    for template in PROTECTED:
        target = _path(template.replace("{xdg}", str(xdg)), tmp_path, workspace)
        for name in ("Write", "Edit", "Scribe", "SelfAllowing"):
            result = await check(rt, name, file_path=target)
            assert (result.decision, "every mode" in result.reason) == ("ask", True), (mode, name, target)
        for command in (f"echo x > '{target}'", f"cp a.txt '{target}'", f"echo x >> '{target}'"):
            result = await bash(rt, command)
            assert result.decision == "ask", (mode, command)


@pytest.mark.parametrize("mode", MODES)
async def test_reading_protected_places_is_not_a_safety_matter(
    rt_for: Callable[[PermissionMode], Runtime], mode: PermissionMode, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    rt = rt_for(mode)
    assert (await check(rt, "Read", file_path=".git/config")).decision == "allow"
    assert (await bash(rt, "cat .git/config")).decision == "allow"


def test_safety_checks_every_resolved_form(tmp_path: Path) -> None:
    real_git = tmp_path / "repo" / ".git"
    real_git.mkdir(parents=True)
    (tmp_path / "innocent").symlink_to(real_git)
    reason = protected_write(tmp_path / "innocent" / "hooks" / "pre-commit")
    assert reason is not None and ".git" in reason
    assert protected_write(tmp_path / "repo" / "src.py") is None


@pytest.mark.parametrize(
    ("raw", "suspicious"),
    [
        ("a/b.txt", False),
        ("a/b.txt.", True),
        ("a/b.txt ", True),
        ("a/.../b", True),
        ("PROGRA~1/x", True),
        ("a/CON", True),
        ("a/lpt1.txt", True),
        ("//host/share", True),
        ("/normal/abs/path", False),
        ("../ok", False),
        # Windows aliases stay caught ...
        (".git./hooks/pre-commit", True),
        ("GIT~1/hooks/pre-commit", True),
        ("a/.../.git", True),
        ("x/PREFIX=./out.", True),
        # ... and these everyday words are no alias: Go's package pattern, option values, git revisions.
        ("./...", False),
        ("pkg/...", False),
        ("PREFIX=./out", False),
        ("--prefix=../x", False),
        ("HEAD~1", False),
        ("ORIG_HEAD^2", False),
        ("@~3:src/app.py", False),
        ("HEAD~1.", True),
    ],
)
def test_suspicious_forms(raw: str, suspicious: bool) -> None:
    assert (suspicious_form(raw) is not None) is suspicious


@pytest.fixture
def links(workspace: Path, tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (workspace / "a.txt").write_text("a")
    (workspace / "out").symlink_to(outside)  # a directory link that leaves the workspace
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")  # a file link that leaves it
    (workspace / ".git").mkdir()
    (workspace / "hooks-link").symlink_to(workspace / ".git")  # a link into a protected place
    (workspace / "dangling").symlink_to(outside / "not-yet.txt")
    return outside


@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN])
async def test_symlink_and_dotdot_escapes(workspace: Path, links: Path, mode: PermissionMode) -> None:
    rt = make_runtime(workspace, mode=mode)
    try:
        for name, tool_input in [
            ("Read", {"file_path": "out/secret.txt"}),
            ("Read", {"file_path": "leak.txt"}),
            ("Read", {"file_path": "a/../../outside/secret.txt"}),
            ("Grep", {"pattern": "s", "path": "out"}),
            ("Write", {"file_path": "out/new.txt"}),
            ("Write", {"file_path": "leak.txt"}),
            ("Write", {"file_path": "dangling"}),
            ("Bash", {"command": "cat out/secret.txt"}),
            ("Bash", {"command": "cat leak.txt"}),
            ("Bash", {"command": "echo x > out/new.txt"}),
            ("Bash", {"command": "touch dangling"}),
            ("Bash", {"command": "cat ../outside/secret.txt"}),
            ("Bash", {"command": "cd out && cat secret.txt"}),
        ]:
            result = await check(rt, name, **tool_input)
            assert result.decision == "ask", (name, tool_input, result)
        assert (await check(rt, "Read", file_path="a.txt")).decision == "allow"
        protected = await check(rt, "Write", file_path="hooks-link/pre-commit")
        assert protected.decision == "ask" and "every mode" in protected.reason
    finally:
        await rt.aclose()


async def test_allow_rules_must_cover_every_resolved_form(workspace: Path, links: Path) -> None:
    rt = make_runtime(workspace, allow=["Read(/out/**)", "Read(/leak.txt)"])
    try:
        # The rules name the links, but what would really be read is outside them.
        assert (await check(rt, "Read", file_path="out/secret.txt")).decision == "ask"
        assert (await check(rt, "Read", file_path="leak.txt")).decision == "ask"
    finally:
        await rt.aclose()
    rt = make_runtime(workspace, allow=[f"Read(/{links}/**)"])
    try:
        assert (await check(rt, "Read", file_path="out/secret.txt")).decision == "allow"
    finally:
        await rt.aclose()


async def test_deny_rules_match_any_resolved_form(workspace: Path, links: Path) -> None:
    rt = make_runtime(workspace, deny=[f"Read(/{links}/secret.txt)"], mode=PermissionMode.BYPASS)
    try:
        for path in ("leak.txt", "out/secret.txt", str(links / "secret.txt")):
            assert (await check(rt, "Read", file_path=path)).decision == "deny", path
        assert (await bash(rt, "cat leak.txt")).decision == "deny"
    finally:
        await rt.aclose()


async def test_a_workspace_reached_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real-ws"
    real.mkdir()
    (real / "a.txt").write_text("a")
    alias = tmp_path / "alias-ws"
    alias.symlink_to(real)
    rt = make_runtime(alias)
    try:
        assert (await check(rt, "Read", file_path="a.txt")).decision == "allow"
        assert (await check(rt, "Read", file_path=str(real / "a.txt"))).decision == "allow"
    finally:
        await rt.aclose()


async def test_a_link_swapped_between_two_calls_is_seen_by_the_second_decision(workspace: Path, tmp_path: Path) -> None:
    # One decision resolves each path once (its steps share the resolutions); the next resolves afresh.
    (workspace / "real").mkdir()
    (workspace / "real" / "notes.txt").write_text("n")
    secrets = tmp_path / "home" / ".ssh"
    secrets.mkdir(parents=True)
    (secrets / "notes.txt").write_text("key")
    (workspace / "docs").symlink_to(workspace / "real")
    rt = make_runtime(workspace, home=tmp_path / "home", deny=[f"Read(/{secrets}/**)"])
    try:
        assert (await check(rt, "Read", file_path="docs/notes.txt")).decision == "allow"
        (workspace / "docs").unlink()
        (workspace / "docs").symlink_to(secrets)
        swapped = await check(rt, "Read", file_path="docs/notes.txt")
        assert swapped.decision == "deny" and str(secrets) in swapped.reason
    finally:
        await rt.aclose()


def test_case_variants_are_the_protected_names_in_a_spelling_no_loader_uses() -> None:
    listing = ["Agents.MD", ".VSCode", "AGENTS.md", "agents.md", ".vscode", "src", "Claude.md", "README.md"]
    assert case_variants(listing) == ["Agents.MD", ".VSCode", "Claude.md"]


def test_toolgates_own_instruction_files_are_protected_as_it_opens_them() -> None:
    for name in TOOLGATE_INSTRUCTIONS:
        assert name in loader_spellings(name.casefold())
        assert protected_write(Path("/ws") / name) is not None
