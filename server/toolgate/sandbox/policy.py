"""What a sandboxed command may see and change, and the bubblewrap argv that enforces it. Pure: every fact
about the file system comes in through `PathKind`, so the argv is a function of its inputs and unit-testable.

The layout, in mount order (later mounts cover earlier ones):

    /                          read-only (home included)
    /dev, /proc                minimal devices; the sandbox's own process list
    /tmp, /run, /var/run       private and empty (other programs' sockets live there: docker, X11, tmux)
    working directories        writable
    proxy socket               read-only (with Network rules: the egress proxy's unix socket)
    tool directories           read-only (PATH entries inside the private directories: a venv in /tmp)
    scratch directories        writable (the shell host's directory: cwd reports, BASH_ENV)
    pinned ancestors           of the protected paths, bound onto themselves
    protected paths            read-only again, inside the writable roots, whether or not they exist yet
    hidden paths               credentials: an empty directory or an empty file in their place

A protected directory that does not exist yet still gets a mount, so nothing inside can create it; bubblewrap
needs an empty directory as the mount point (git ignores empty directories), which `stand_ins` lists so the
caller creates it just before the command and removes it (if still empty) soon after (placeholders.py).
Every ancestor of a protected path inside a root is bound onto itself ("pinned"): a mount point cannot be
renamed or removed, so `mv .git .git2 && mkdir -p .git/hooks` cannot sidestep the read-only hooks. An absent
protected *file* (`.envrc`, `.mcp.json`) gets an empty read-only *directory* in its place too (an empty file
would be listed by git and committed by `git add -A`; git ignores an empty directory).

The read-only layout (`read_only`: for a command allowed because it only reads, and for every command in plan
mode) binds the working directories read-only too, so nothing is writable but the private directories and the
scratch directories; it needs no protected mounts, pins or stand-ins (nothing there can be made or changed).

Not covered: protected names below the top of a working directory (`sub/.vscode`, `pkg/.envrc`): finding them
would mean walking the tree before every command, and absent ones cannot be listed at all. A write there that a
command shows (`touch sub/.vscode/x`) still asks, in every mode, through the ladder's protected-path check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolgate.core.credentials import CREDENTIAL_DIRS, CREDENTIAL_FILES
from toolgate.permissions.safety import PROTECTED_DIRS, PROTECTED_FILES, PROTECTED_SUFFIXES, loader_spellings

Kind = Literal["dir", "file", "link", "absent"]  # "link": a symbolic link (not followed)
PathKind = Callable[[Path], Kind]

# The protected and credential lists are the permission checks' own (one answer to "what is protected"):
# - every PROTECTED_DIRS name at the top of each working directory: read-only, and an empty read-only stand-in
#   when absent (so nothing inside can create `.vscode/tasks.json`), except NO_STAND_IN;
# - `.git/hooks` and `.git/config` of a repository there, and the PROTECTED_SUFFIXES directories (`.github/
#   workflows`, ...): read-only; a stand-in when absent but their parent exists (no new parents are made, but an
#   absent STAND_IN_PARENTS directory gets a stand-in itself);
# - PROTECTED_FILES: read-only; an empty read-only directory stands in while a command runs when absent;
# - credentials under the home directory (CREDENTIAL_DIRS, CREDENTIAL_FILES): not visible at all.
# (An empty `.git` does not look like a repository: git looks further up; so an absent `.git` gets a stand-in,
# and `git init`, whose hooks would run outside later, cannot run in the sandbox.)
#
# Which absent names need a stand-in: those a command could create to run code, or change policy, *outside* the
# sandbox later and without the user running the project's own code (an editor's tasks on opening the folder,
# an agent's hooks or MCP servers, git's hooks, direnv, CI with the repository's secrets, toolgate's own
# instructions). A stand-in costs a directory in the user's workspace and a mount per command, so these, on
# the protected lists for the ladder's asks, stay makeable in the sandbox (present ones stay read-only):
NO_STAND_IN: dict[str, str] = {
    ".hg": "an empty one would look like a broken repository to Mercurial",
    ".svn": "an empty one would look like a broken working copy to Subversion",
    ".husky": (
        "husky's hooks run only through git's core.hooksPath, which is set in .git/config (read-only, and "
        "the directory it names is protected itself); a new .husky/ alone runs nothing"
    ),
    ".pre-commit-hooks.yaml": (
        "it declares the hooks this repository offers to *other* repositories; pre-commit never runs it here "
        "(.pre-commit-config.yaml, which it does run, keeps its stand-in)"
    ),
    ".gitmodules": (
        "git runs no code from it (`update = !command` is honoured only from .git/config, `ext::` URLs are "
        "refused by default), and cloning a submodule runs none of its hooks"
    ),
}
# Read only from the home directory (shells, readline, git's global config, Claude Code's ~/.claude.json, ssh's
# ~/.ssh) or from where an environment variable points (.ripgreprc): an absent one gets a stand-in
# only in a working directory that is the home directory. Elsewhere nothing reads them, and every mount costs
# each command time (bench_sandbox). Present ones stay read-only everywhere (a dotfiles repository's may be
# linked from home).
HOME_ONLY: frozenset[str] = frozenset(
    {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
        ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc", ".gitconfig", ".claude.json", ".ripgreprc",
        ".ssh",
    }
)  # fmt: skip
# Absent parents that get a stand-in themselves, so the protected directory below cannot be made by making
# them first (`mkdir -p .github/workflows`). Only these: a stand-in `.config` or `library` would stop ordinary
# project directories of that name from being created.
STAND_IN_PARENTS: frozenset[str] = frozenset({".github"})
REPOSITORY_ENTRIES: tuple[tuple[str, bool], ...] = ((".git/hooks", True), (".git/config", False))


def protected_entries() -> tuple[tuple[str, bool], ...]:
    """(path relative to a working directory, is a directory) for every protected entry, from safety.py: each
    protected file under every spelling a loader opens it by (`AGENTS.md`, not only the listed `agents.md`)."""
    dirs = [(name, True) for name in sorted(PROTECTED_DIRS)]
    suffixes = [("/".join(suffix), True) for suffix in PROTECTED_SUFFIXES]
    files = [(spelling, False) for name in sorted(PROTECTED_FILES) for spelling in loader_spellings(name)]
    return (*dirs, *REPOSITORY_ENTRIES, *suffixes, *files)


def hidden_home_entries() -> tuple[str, ...]:
    return (*("/".join(suffix) for suffix in CREDENTIAL_DIRS), *sorted(CREDENTIAL_FILES))


PRIVATE_DIRS: tuple[Path, ...] = (Path("/tmp"), Path("/run"), Path("/var/run"), Path("/var/tmp"))


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    writable_roots: tuple[Path, ...]  # the working directories (workspace first)
    home: Path
    empty_dir: Path  # an empty directory nothing writes to: the stand-in for absent protected directories
    empty_file: Path  # an empty regular file: the stand-in for hidden files (a bound /dev/null cannot be opened)
    scratch_dirs: tuple[Path, ...] = ()  # writable too; bound after the private /tmp so they survive it
    extra_writable: tuple[Path, ...] = ()  # from the user's settings
    extra_hidden: tuple[Path, ...] = ()
    # The egress proxy's socket directory, bound read-only (a socket is connected to, never written as a
    # file); None: no network at all.
    proxy_dir: Path | None = None
    # PATH directories inside the private directories (a virtualenv in /tmp): bound read-only, so the command
    # finds its programs; `tool_dirs_for` picks them.
    tool_dirs: tuple[Path, ...] = ()
    extra_protected: tuple[Path, ...] = ()  # absolute: git's core.hooksPath directories
    # The empty stand-ins toolgate made that exist now (for other commands): planned as absent, so each gets its
    # empty read-only mount again. Seen as present, a stand-in `.git` would be pinned writable, and get stand-ins
    # of its own inside (`.git/hooks`). One the user filled meanwhile shows empty to this command (read-only
    # either way) and is left alone when the stand-ins go.
    stand_ins_made: frozenset[Path] = frozenset()
    # Nothing writable but the private directories and the scratch directories: the working directories (their
    # .git included) are bound read-only like the rest.
    read_only: bool = False
    # Files inside the scratch directories commands must not change (the shell's BASH_ENV script, which every
    # later command sources, outside the sandbox too): bound read-only over themselves.
    fixed_files: tuple[Path, ...] = ()
    # Entries at the top of a working directory that are a protected name in another case (`.VSCode`,
    # `Agents.MD`; safety.case_variants of a listing the caller made): read-only like the names themselves.
    case_variants: tuple[Path, ...] = ()
    protected: tuple[tuple[str, bool], ...] = field(default_factory=protected_entries)
    hidden_home: tuple[str, ...] = field(default_factory=hidden_home_entries)


@dataclass(frozen=True, slots=True)
class Mount:
    """One line of the effective layout, for `toolgate sandbox policy` and the tests."""

    what: Literal["read-only", "writable", "private", "protected", "hidden", "pinned", "proxy"]
    path: Path
    note: str = ""


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    argv: tuple[str, ...]  # bwrap and its options, up to and including `--`; the command follows
    mounts: tuple[Mount, ...]
    # Absent protected paths (directories and files alike) the layout mounts an empty directory on: the caller
    # creates each (empty) just before the command and removes it soon after the last command using it ended, so
    # none is left in the workspace once the commands ended (placeholders.py).
    stand_ins: tuple[Path, ...] = field(default=())


def tool_dirs_for(path_entries: list[Path]) -> tuple[Path, ...]:
    """The directories to show for the PATH entries the private directories would hide: a `bin` directory's
    parent (a virtualenv's `bin/python` needs its `lib/` and `pyvenv.cfg`), else the entry itself; never a
    private directory itself (all of /tmp would show other programs' sockets)."""
    chosen: dict[Path, None] = {}
    for entry in path_entries:
        if not any(_under(entry, private) for private in PRIVATE_DIRS) or entry in PRIVATE_DIRS:
            continue
        shown = entry.parent if entry.name == "bin" and entry.parent not in PRIVATE_DIRS else entry
        chosen[shown] = None
    return tuple(chosen)


def _under(path: Path, root: Path) -> bool:
    return path.is_relative_to(root)


def _ancestors_within(path: Path, root: Path) -> list[Path]:
    """The directories strictly between `root` and `path`, outermost first (built from the relative parts: a
    walk over `path.parents` compared with pathlib costs each command milliseconds over ~80 protected paths)."""
    if not path.is_relative_to(root):
        return []
    parts = path.relative_to(root).parts
    return [root.joinpath(*parts[:depth]) for depth in range(1, len(parts))]


def build_plan(policy: SandboxPolicy, path_kind: PathKind, bwrap: str = "bwrap") -> SandboxPlan:
    def kind(path: Path) -> Kind:
        return "absent" if path in policy.stand_ins_made else path_kind(path)

    argv: list[str] = [bwrap]
    mounts: list[Mount] = []

    def add(option: str, *paths: Path) -> None:
        argv.append(option)
        argv.extend(str(p) for p in paths)

    add("--ro-bind", Path("/"), Path("/"))
    mounts.append(Mount("read-only", Path("/"), "everything not listed below, home included"))
    add("--dev", Path("/dev"))
    add("--proc", Path("/proc"))
    for private in PRIVATE_DIRS:
        if kind(private) == "dir":  # /var/run is usually a symlink to /run: covered by it
            add("--tmpfs", private)
            mounts.append(Mount("private", private, "empty, private to this command"))

    if policy.proxy_dir is not None:  # after the private /tmp, which it lives in on the host
        add("--ro-bind", policy.proxy_dir, policy.proxy_dir)
        mounts.append(Mount("proxy", policy.proxy_dir, "the network proxy's socket: the only way out"))

    for tool_dir in policy.tool_dirs:
        if kind(tool_dir) == "dir":
            add("--ro-bind", tool_dir, tool_dir)
            mounts.append(Mount("read-only", tool_dir, "holds a PATH directory: its programs stay visible"))

    roots = [r for r in (*policy.writable_roots, *policy.extra_writable) if kind(r) == "dir"]
    if policy.read_only:  # bound anyway: one under a private directory (/tmp) would be hidden otherwise
        for root in roots:
            add("--ro-bind", root, root)
            mounts.append(Mount("read-only", root, "a working directory: read-only for this command"))
    scratch = [d for d in policy.scratch_dirs if kind(d) == "dir"]
    for root in (*([] if policy.read_only else roots), *scratch):
        add("--bind", root, root)
        mounts.append(Mount("writable", root))
    for fixed in policy.fixed_files:
        if kind(fixed) == "file":
            add("--ro-bind", fixed, fixed)
            mounts.append(Mount("protected", fixed, "read-only: the shell runs it before every command"))
    protected, pins, absent = ([], [], []) if policy.read_only else _protected_layout(policy, roots, kind)
    # Pins before the protected mounts: bwrap binds from the host's view, which has none of the sandbox's mounts,
    # so a pin bound later would cover the read-only mounts below it.
    for ancestor in pins:
        add("--bind", ancestor, ancestor)
        mounts.append(Mount("pinned", ancestor, "a mount point: cannot be renamed or removed"))
    for source, target, note in protected:
        add("--ro-bind", source, target)
        mounts.append(Mount("protected", target, note))

    hidden = [policy.home / e for e in policy.hidden_home] + list(policy.extra_hidden)
    for path in hidden:
        found = kind(path)
        if found in ("dir", "link"):
            add("--ro-bind", policy.empty_dir, path)  # one mount (a tmpfs made read-only would be two)
            mounts.append(Mount("hidden", path, "an empty directory stands in"))
        elif found == "file":
            add("--ro-bind", policy.empty_file, path)
            mounts.append(Mount("hidden", path, "an empty file stands in"))

    argv += ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--cap-drop", "ALL"]
    argv.append("--")
    return SandboxPlan(tuple(argv), tuple(mounts), tuple(absent))


def _protected_layout(
    policy: SandboxPolicy, writable: list[Path], kind: PathKind
) -> tuple[list[tuple[Path, Path, str]], list[Path], list[Path]]:
    """The protected mounts (source, target, note) inside the writable roots, the ancestors to pin (outermost
    first), and the absent paths that get a stand-in."""
    absent: list[Path] = []
    pins: dict[Path, None] = {}
    protected: list[tuple[Path, Path, str]] = []  # (source, target, note)
    targets = [(root / entry, root, is_dir) for root in writable for entry, is_dir in policy.protected]
    targets += [(path, root, True) for path in policy.extra_protected for root in writable if _under(path, root)]
    targets += [(path, root, False) for path in policy.case_variants for root in writable if path.parent == root]
    seen: set[Path] = set()
    for target, root, is_dir in targets:
        if target == root or target in seen:
            continue  # `.clinerules` is on both lists: the directory (listed first) stands in for both
        seen.add(target)
        chain = _ancestors_within(target, root)
        missing = [p for p in chain if kind(p) != "dir"]
        if missing:  # its parent is absent, or a file or link (`.git` of a worktree): nothing to pin there
            first = missing[0]
            stand_in = first.parent == root and first.name in STAND_IN_PARENTS and kind(first) == "absent"
            if stand_in and first not in absent:
                note = f"absent: an empty read-only directory stands in, so {target.name} cannot be made in it"
                protected.append((policy.empty_dir, first, note))
                absent.append(first)
            continue
        found = kind(target)
        if target.name == ".git" and target.parent == root and found == "dir":
            continue  # a repository: pinned as the parent of its hooks and config, which stay read-only
        if found == "absent" and target == root / target.name and target.name in NO_STAND_IN:
            continue
        if found == "absent" and target.name in HOME_ONLY and root != policy.home:
            continue
        if found == "absent" and not is_dir:
            # A directory, not an empty file: `git add -A` in the sandbox would commit an empty file, and git
            # ignores an empty directory. Nothing can create the file where a directory is mounted.
            note = "absent: an empty read-only directory stands in while the command runs"
            protected.append((policy.empty_dir, target, note))
            absent.append(target)
        elif found == "absent":
            protected.append((policy.empty_dir, target, "absent: an empty read-only directory stands in"))
            absent.append(target)
        else:
            protected.append((target, target, "read-only"))
        pins.update((p, None) for p in chain)
    return protected, sorted(pins, key=lambda p: len(p.parts)), absent


def describe(plan: SandboxPlan) -> str:
    width = max((len(m.what) for m in plan.mounts), default=0)
    lines = [f"{m.what:<{width}}  {m.path}" + (f"  ({m.note})" if m.note else "") for m in plan.mounts]
    return "\n".join(lines)
