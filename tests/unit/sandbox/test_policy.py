"""The pure bubblewrap argv builder: which mounts, in which order, for which file system facts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from toolgate.permissions.safety import PROTECTED_DIRS, PROTECTED_FILES
from toolgate.sandbox.policy import NO_STAND_IN, Kind, SandboxPlan, SandboxPolicy, build_plan, describe

WS = Path("/work/ws")
HOME = Path("/home/u")
EMPTY = Path("/tmp/stand-ins/empty")
EMPTY_FILE = Path("/tmp/stand-ins/empty-file")
SCRATCH = Path("/tmp/toolgate-shell-1")


def plan_for(existing: dict[Path, Kind], **policy: object) -> SandboxPlan:
    facts = {Path("/tmp"): "dir", Path("/run"): "dir", Path("/var/run"): "link", WS: "dir", SCRATCH: "dir", **existing}

    def kind(path: Path) -> Kind:
        return facts.get(path, "absent")

    base = SandboxPolicy(
        writable_roots=(WS,), home=HOME, empty_dir=EMPTY, empty_file=EMPTY_FILE, scratch_dirs=(SCRATCH,)
    )
    return build_plan(replace(base, **policy), kind)  # type: ignore[arg-type]


def pairs(plan: SandboxPlan, option: str) -> list[tuple[str, ...]]:
    """Each occurrence of `option` with its arguments (two paths for binds, one for tmpfs)."""
    argv, width = list(plan.argv), 2 if "bind" in option else 1
    return [tuple(argv[i + 1 : i + 1 + width]) for i, word in enumerate(argv) if word == option]


def index_of(plan: SandboxPlan, option: str, *args: str) -> int:
    argv = list(plan.argv)
    for i, word in enumerate(argv):
        if word == option and tuple(argv[i + 1 : i + 1 + len(args)]) == args:
            return i
    raise AssertionError(f"{option} {args} not in {argv}")


def test_root_is_read_only_and_the_workspace_writable_after_the_private_tmp() -> None:
    plan = plan_for({})
    assert plan.argv[:4] == ("bwrap", "--ro-bind", "/", "/")
    assert index_of(plan, "--tmpfs", "/tmp") < index_of(plan, "--bind", str(WS), str(WS))
    assert index_of(plan, "--tmpfs", "/tmp") < index_of(plan, "--bind", str(SCRATCH), str(SCRATCH))
    assert ("/run",) in pairs(plan, "--tmpfs")
    assert ("/var/run",) not in pairs(plan, "--tmpfs")  # a link to /run, already private


def test_no_network_no_capabilities_no_new_user_namespaces_and_the_command_follows_a_separator() -> None:
    plan = plan_for({})
    for option in ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"):
        assert option in plan.argv
    assert "--share-net" not in plan.argv
    assert pairs(plan, "--cap-drop") == [("ALL",)]
    assert plan.argv[-1] == "--"
    assert "--new-session" not in plan.argv  # it would take the command out of the process group we stop


def test_existing_protected_paths_are_bound_read_only_over_the_writable_root() -> None:
    git = WS / ".git"
    plan = plan_for({git: "dir", git / "hooks": "dir", git / "config": "file", WS / ".vscode": "dir"})
    ro = pairs(plan, "--ro-bind")
    for path in (git / "hooks", git / "config", WS / ".vscode"):
        assert (str(path), str(path)) in ro
        assert index_of(plan, "--bind", str(WS), str(WS)) < index_of(plan, "--ro-bind", str(path), str(path))
    assert WS / ".vscode" not in plan.stand_ins


def test_absent_protected_directories_get_an_empty_read_only_stand_in_and_are_listed_for_cleanup() -> None:
    plan = plan_for({WS / ".git": "dir", WS / ".github": "dir"})
    ro = pairs(plan, "--ro-bind")
    for path in (WS / ".toolgate", WS / ".vscode", WS / ".claude", WS / ".git" / "hooks", WS / ".github" / "workflows"):
        assert (str(EMPTY), str(path)) in ro
        assert path in plan.stand_ins
    assert WS / ".git" not in plan.stand_ins


def test_no_parent_directory_is_made_for_a_stand_in() -> None:
    plan = plan_for({})
    targets = [target for _source, target in pairs(plan, "--ro-bind")]
    assert str(WS / ".github" / "workflows") not in targets
    assert not any(len(p.relative_to(WS).parts) > 1 for p in plan.stand_ins)


def test_the_protected_list_is_the_permission_checks_own() -> None:
    from toolgate.core.credentials import CREDENTIAL_FILES

    plan = plan_for({HOME / name: "file" for name in CREDENTIAL_FILES})
    ro = pairs(plan, "--ro-bind")
    assert all((str(EMPTY), str(WS / name)) in ro for name in PROTECTED_DIRS - set(NO_STAND_IN))
    assert all((str(EMPTY_FILE), str(HOME / name)) in ro for name in CREDENTIAL_FILES)


def test_git_hooks_path_directories_are_protected_too() -> None:
    hooks = WS / "tools" / "hooks"
    plan = plan_for({WS / "tools": "dir", hooks: "dir"}, extra_protected=(hooks,))
    assert (str(hooks), str(hooks)) in pairs(plan, "--ro-bind")
    assert (str(WS / "tools"), str(WS / "tools")) in pairs(plan, "--bind")  # pinned


def test_an_absent_repository_gets_a_stand_in_git_and_absent_hg_none() -> None:
    plan = plan_for({})
    assert (str(EMPTY), str(WS / ".git")) in pairs(plan, "--ro-bind")
    targets = [target for _source, target in pairs(plan, "--ro-bind")]
    assert str(WS / ".git" / "hooks") not in targets  # covered by the stand-in
    assert str(WS / ".hg") not in targets  # an empty .hg would look like a broken repository


def test_absent_protected_files_get_an_empty_read_only_directory_listed_for_the_command_only() -> None:
    plan = plan_for({WS / ".git": "dir", WS / ".envrc": "file"})
    ro = pairs(plan, "--ro-bind")
    for path in (WS / ".mcp.json", WS / ".pre-commit-config.yaml", WS / "agents.md", WS / ".git" / "config"):
        assert (str(EMPTY), str(path)) in ro  # a directory: git ignores it, `git add -A` would commit a file
        assert path in plan.stand_ins
    assert (str(WS / ".envrc"), str(WS / ".envrc")) in ro and WS / ".envrc" not in plan.stand_ins
    # `.clinerules` is a protected directory and file name: one stand-in (the directory), never two mounts.
    assert [t for _s, t in ro].count(str(WS / ".clinerules")) == 1 and plan.stand_ins.count(WS / ".clinerules") == 1


def test_absent_shell_startup_files_get_a_stand_in_only_in_a_working_directory_that_is_home() -> None:
    plan = plan_for({WS / ".bashrc": "file", HOME: "dir"}, writable_roots=(WS, HOME))
    ro = pairs(plan, "--ro-bind")
    assert (str(WS / ".bashrc"), str(WS / ".bashrc")) in ro  # present: read-only everywhere
    assert WS / ".zshrc" not in plan.stand_ins and WS / ".gitconfig" not in plan.stand_ins
    assert HOME / ".zshrc" in plan.stand_ins and HOME / ".gitconfig" in plan.stand_ins
    assert WS / ".envrc" in plan.stand_ins  # read where it is: everywhere


def test_only_what_could_run_code_or_change_policy_outside_later_gets_a_stand_in() -> None:
    plan = plan_for({})
    # 30 before the instruction files of other agents, .devcontainer, and every spelling their loaders open
    # (AGENTS.md, agents.md, Agents.md, ...) were protected; 34 before `NO_STAND_IN` grew and `.ssh` became
    # home-only
    assert len(plan.stand_ins) == 47
    for name in (".husky", ".pre-commit-hooks.yaml", ".gitmodules", ".ssh", ".hg", ".svn"):
        assert WS / name not in plan.stand_ins
    for name in (".vscode", ".git", ".claude", ".toolgate", ".envrc", ".mcp.json", ".pre-commit-config.yaml"):
        assert WS / name in plan.stand_ins
    assert set(NO_STAND_IN) <= PROTECTED_DIRS | PROTECTED_FILES  # derived from the ladder's lists, never new
    present = plan_for({WS / name: "dir" for name in NO_STAND_IN})
    for name in NO_STAND_IN:  # still read-only where they exist
        assert (str(WS / name), str(WS / name)) in pairs(present, "--ro-bind")
    at_home = plan_for({HOME: "dir"}, writable_roots=(HOME,))
    assert HOME / ".ssh" in at_home.stand_ins


def test_a_stand_in_another_command_made_is_planned_as_absent_never_pinned_writable() -> None:
    made = frozenset({WS / ".git", WS / ".github"})
    plan = plan_for({WS / ".git": "dir", WS / ".github": "dir"}, stand_ins_made=made)
    assert (str(EMPTY), str(WS / ".git")) in pairs(plan, "--ro-bind")
    assert (str(WS / ".git"), str(WS / ".git")) not in pairs(plan, "--bind")
    assert WS / ".git" in plan.stand_ins and WS / ".github" in plan.stand_ins
    assert not any(len(p.relative_to(WS).parts) > 1 for p in plan.stand_ins)  # none inside them


def test_an_absent_github_directory_stands_in_itself_so_workflows_cannot_be_made() -> None:
    plan = plan_for({})
    assert (str(EMPTY), str(WS / ".github")) in pairs(plan, "--ro-bind")
    assert plan.stand_ins.count(WS / ".github") == 1
    assert WS / ".config" not in plan.stand_ins  # only `.github`: `.config` is an ordinary name too


def test_path_directories_in_private_directories_are_shown_read_only() -> None:
    from toolgate.sandbox.policy import tool_dirs_for

    entries = [Path("/tmp/venv/bin"), Path("/tmp/node/tools"), Path("/usr/bin"), Path("/tmp"), Path("/tmp/bin")]
    assert tool_dirs_for(entries) == (Path("/tmp/venv"), Path("/tmp/node/tools"), Path("/tmp/bin"))
    plan = plan_for({Path("/tmp/venv"): "dir"}, tool_dirs=(Path("/tmp/venv"), Path("/tmp/gone")))
    ro = pairs(plan, "--ro-bind")
    assert ("/tmp/venv", "/tmp/venv") in ro and ("/tmp/gone", "/tmp/gone") not in ro
    assert index_of(plan, "--tmpfs", "/tmp") < index_of(plan, "--ro-bind", "/tmp/venv", "/tmp/venv")


def test_ancestors_are_pinned_before_the_protected_mounts_below_them() -> None:
    """bwrap binds from the host's view: a pin bound after the read-only hooks would cover them again."""
    git = WS / ".git"
    plan = plan_for({git: "dir", git / "hooks": "dir"})
    pin = index_of(plan, "--bind", str(git), str(git))
    assert pin < index_of(plan, "--ro-bind", str(git / "hooks"), str(git / "hooks"))
    assert pin > index_of(plan, "--bind", str(WS), str(WS))


def test_a_git_file_or_link_is_not_looked_into() -> None:
    plan = plan_for({WS / ".git": "file"})
    assert all(".git/" not in " ".join(pair) for pair in pairs(plan, "--ro-bind"))
    assert (str(WS / ".git"), str(WS / ".git")) not in pairs(plan, "--bind")


def test_credentials_in_home_are_hidden_by_an_empty_directory_or_file() -> None:
    plan = plan_for({HOME / ".ssh": "dir", HOME / ".netrc": "file"})
    assert (str(EMPTY), str(HOME / ".ssh")) in pairs(plan, "--ro-bind")  # one mount, not a tmpfs and a remount
    assert (str(EMPTY_FILE), str(HOME / ".netrc")) in pairs(plan, "--ro-bind")
    assert str(HOME / ".aws") not in plan.argv  # absent, and home is read-only: nothing can create it


def test_extra_writable_and_hidden_paths_from_settings() -> None:
    extra, secret = Path("/data/cache"), Path("/data/secret.key")
    plan = plan_for({extra: "dir", secret: "file"}, extra_writable=(extra,), extra_hidden=(secret,))
    assert (str(extra), str(extra)) in pairs(plan, "--bind")
    assert (str(EMPTY_FILE), str(secret)) in pairs(plan, "--ro-bind")


def test_a_missing_working_directory_is_not_bound() -> None:
    plan = plan_for({}, writable_roots=(WS, Path("/gone")))
    assert ("/gone", "/gone") not in pairs(plan, "--bind")


def test_described_layout_names_every_kind_of_mount() -> None:
    text = describe(plan_for({HOME / ".ssh": "dir", WS / ".git": "dir"}))
    for word in ("read-only", "private", "writable", "pinned", "protected", "hidden"):
        assert word in text


def test_the_read_only_layout_binds_the_working_directories_read_only_and_needs_no_stand_ins() -> None:
    rc = SCRATCH / "bash_env.sh"
    plan = plan_for({WS / ".git": "dir", rc: "file"}, read_only=True, fixed_files=(rc,))
    assert (str(WS), str(WS)) in pairs(plan, "--ro-bind")
    assert index_of(plan, "--tmpfs", "/tmp") < index_of(plan, "--ro-bind", str(WS), str(WS))
    assert pairs(plan, "--bind") == [(str(SCRATCH), str(SCRATCH))]  # the only writable place besides the tmpfs
    assert index_of(plan, "--bind", str(SCRATCH), str(SCRATCH)) < index_of(plan, "--ro-bind", str(rc), str(rc))
    assert plan.stand_ins == ()
    assert not any(m.what in ("pinned", "writable") and m.path != SCRATCH for m in plan.mounts)


def test_the_writable_layout_keeps_the_shells_startup_file_read_only_too() -> None:
    rc = SCRATCH / "bash_env.sh"
    plan = plan_for({rc: "file"}, fixed_files=(rc,))
    assert index_of(plan, "--bind", str(SCRATCH), str(SCRATCH)) < index_of(plan, "--ro-bind", str(rc), str(rc))
    assert (str(WS), str(WS)) in pairs(plan, "--bind")


def test_absent_instruction_files_are_covered_in_every_spelling_their_loaders_open() -> None:
    plan = plan_for({WS / ".git": "dir"})
    for name in ("AGENTS.md", "agents.md", "Agents.md", "TOOLGATE.md", "CLAUDE.md", "GEMINI.md", "AGENT.md"):
        assert WS / name in plan.stand_ins, name
    assert WS / "toolgate.md" not in plan.stand_ins  # nothing opens it on a case-sensitive file system


def test_present_case_variants_of_protected_names_are_read_only() -> None:
    variants = (WS / ".VSCode", WS / "Agents.MD")
    plan = plan_for({WS / ".VSCode": "dir", WS / "Agents.MD": "file"}, case_variants=variants)
    ro = pairs(plan, "--ro-bind")
    for variant in variants:
        assert (str(variant), str(variant)) in ro
        assert variant not in plan.stand_ins
