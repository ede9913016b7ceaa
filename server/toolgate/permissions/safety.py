"""Safety checks that no mode and no allow rule skips: they always ask a person.

Writes to places that configure code execution or toolgate itself (`.git/`, `.vscode/`, `.idea/`,
`.toolgate/`, settings files, shell startup files, `.gitconfig`, `.gitmodules`, `.mcp.json`, ...), other
agents' configuration (`.claude/`, `.cursor/`, ...: a model must not be able to grant itself permissions
through a peer's config), CI and git automation (`.github/workflows/`, `.husky/`, `.pre-commit-config.yaml`,
git hooks and a `core.hooksPath` target), the instruction files toolgate or another agent loads into its
system prompt (`TOOLGATE.md`, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`, `.cursorrules`, Copilot's instructions,
...: a file written now would steer a later session), the editors' user settings (they name the interpreter
the sidecar runs), and paths written in forms that can name a different file than they appear to (Windows
short names, alternate data streams, trailing dots, device names, UNC shares). Reads of credential files
(core/credentials.py) ask too. Every form of a path (as given, and with symlinks resolved) is checked, and
names are compared case-insensitively (macOS and Windows file systems ignore case).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from toolgate.core.credentials import credential_reason
from toolgate.core.paths import Resolutions, is_within, resolved_forms, resolved_texts, within_text
from toolgate.permissions.facts import CallFacts
from toolgate.text.shell_patterns import has_pattern

PROTECTED_DIRS = frozenset(
    {
        ".git", ".vscode", ".idea", ".toolgate", ".hg", ".svn", ".husky",
        # other agents' project and user configuration
        ".claude", ".gemini", ".codex", ".cursor", ".continue", ".roo", ".clinerules", ".windsurf", ".kiro",
        ".amazonq", ".aider",
    }
)  # fmt: skip
PROTECTED_FILES = frozenset(
    {
        ".gitconfig", ".gitmodules", ".mcp.json", ".envrc", ".ripgreprc",
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
        ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc",
        ".aider.conf.yml", ".claude.json", ".cursorrules", ".windsurfrules", ".clinerules", ".roomodes",
        ".gitlab-ci.yml", ".pre-commit-config.yaml", ".pre-commit-hooks.yaml", "lefthook.yml", ".lefthook.yml",
        ".devcontainer.json",  # its postCreateCommand runs when the folder is reopened in a container
        # instructions loaded into an agent's system prompt (toolgate's own: TOOLGATE_INSTRUCTIONS); the
        # spellings each loader opens are LOADER_SPELLINGS
        "toolgate.md", "agents.md", "agent.md", "agents.override.md", "claude.md", "claude.local.md", "gemini.md",
        "crush.md", "crush.local.md", ".rules",
    }
)  # fmt: skip
# The instruction files toolgate loads into its own system prompt (agent/system_prompt.py), as it opens them.
TOOLGATE_INSTRUCTIONS = ("TOOLGATE.md", "AGENTS.md")
# Every spelling under which a loader opens a protected name, for the names not opened as their lower-case
# form. The checks above fold case, so they cover every spelling; the sandbox mounts names exactly, and on a
# case-sensitive file system only the spellings a loader opens reach it: these are the ones it must cover when
# absent (present ones in any case are found by listing the directory: `case_variants`). Sources: toolgate;
# Codex (AGENTS.md, AGENTS.override.md); Amp and Zed (AGENT.md, AGENTS.md); Claude Code (CLAUDE.md,
# CLAUDE.local.md); Gemini CLI (GEMINI.md); Crush (its own, AGENTS.md and GEMINI.md in three cases each).
LOADER_SPELLINGS: dict[str, tuple[str, ...]] = {
    "toolgate.md": ("TOOLGATE.md",),
    "agents.md": ("AGENTS.md", "agents.md", "Agents.md"),
    "agent.md": ("AGENT.md",),
    "agents.override.md": ("AGENTS.override.md",),
    "claude.md": ("CLAUDE.md",),
    "claude.local.md": ("CLAUDE.local.md",),
    "gemini.md": ("GEMINI.md", "gemini.md"),
    "crush.md": ("CRUSH.md", "crush.md", "Crush.md"),
    "crush.local.md": ("CRUSH.local.md", "crush.local.md", "Crush.local.md"),
}


def loader_spellings(name: str) -> tuple[str, ...]:
    """The names under which loaders open the protected name `name` (as listed: lower case)."""
    return LOADER_SPELLINGS.get(name, (name,))


_PROTECTED_NAMES = PROTECTED_DIRS | PROTECTED_FILES
# Every spelling a loader opens a protected name by (asked at every sandboxed command's launch: computed once).
_LOADER_SPELLED = frozenset(spelling for name in _PROTECTED_NAMES for spelling in loader_spellings(name))


def case_variants(entries: Iterable[str]) -> list[str]:
    """Of the names in a directory, those that are a protected name in another spelling than a loader's
    (`.VSCode`, `Agents.MD`): on a case-insensitive file system they are the protected file itself."""
    return [e for e in entries if e not in _LOADER_SPELLED and _fold(e) in _PROTECTED_NAMES]


# Directories (relative to anywhere) whose files configure tools that run code: git's and fish's configs, CI,
# ssh, toolgate's own user config, and the user settings of VS Code and its relatives on Linux, macOS and Windows.
_EDITORS = ("code", "code - insiders", "vscodium", "code - oss", "cursor", "windsurf")
PROTECTED_SUFFIXES: tuple[tuple[str, ...], ...] = (
    (".config", "git"), (".config", "fish"), (".ssh",), (".config", "toolgate"),
    (".github", "workflows"), (".github", "actions"), (".circleci",), (".buildkite",),
    (".github", "copilot-instructions.md"), (".github", "instructions"), (".devcontainer",),
    (".local", "share", "code-server", "user"), (".local", "share", "code-server", "machine"),
    (".vscode-server", "data"), (".vscode-remote", "data"), (".config", "code-server"),
    *((".config", editor, "user") for editor in _EDITORS),
    *(("library", "application support", editor, "user") for editor in _EDITORS),
    *(("appdata", "roaming", editor, "user") for editor in _EDITORS),
)  # fmt: skip

_SHORT_NAME = re.compile(r"~\d")  # PROGRA~1: a Windows 8.3 name that may alias a protected one
# Git's own revision names with `~N`/`^N` (`HEAD~1`, `ORIG_HEAD^2`, `@~3:src`): revisions, which git never looks up
# as a file, and no protected name's short form starts with them.
_GIT_REVISION = re.compile(r"(HEAD|FETCH_HEAD|ORIG_HEAD|MERGE_HEAD|CHERRY_PICK_HEAD|REVERT_HEAD|@)([~^]\d*)+(:.*)?")
# `PREFIX=./out`, `--prefix=../x`: an option's value that starts with `.` or `..`, not a name ending in a dot.
_OPTION_VALUE_DOTS = re.compile(r"[^=]*=\.\.?")
_DEVICE = re.compile(r"^(con|prn|aux|nul|com\d|lpt\d|conin\$|conout\$)(\..*)?$", re.IGNORECASE)


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def suspicious_form(raw: str) -> str | None:
    """Why a path *as written* is suspicious, or None."""
    text = raw.replace("\\", "/")
    if text.startswith("//") and not text.startswith("///"):
        return "it is a network (UNC) path"
    parts = [p for p in text.split("/") if p]
    for index, part in enumerate(parts):
        # A last `...` is Go's "and every package below" (`go test ./...`); Windows reads it as `.`, the very
        # directory it follows, so it aliases nothing the check did not already see. Inside a path it stays odd.
        last_dots = part == "..." and index == len(parts) - 1
        dotted = part.endswith(".") and not _OPTION_VALUE_DOTS.fullmatch(part)
        if part not in (".", "..") and not last_dots and (dotted or part.endswith(" ")):
            return f"the name {part!r} ends with a dot or space, which Windows drops (it can alias another file)"
        if part.startswith("...") and set(part) == {"."} and not last_dots:
            return f"the name {part!r} is only dots"
        if _SHORT_NAME.search(part) and not _GIT_REVISION.fullmatch(part):
            return f"the name {part!r} looks like a Windows short name (8.3), which can alias another file"
        if ":" in part and os.name == "nt":
            return f"the name {part!r} contains ':' (a Windows drive or alternate data stream)"
        if _DEVICE.match(part):
            return f"the name {part!r} is a Windows device name"
    return None


def _protected_in(path: Path) -> str | None:
    parts = [_fold(p) for p in PurePosixPath(path).parts[1:]]
    for index, part in enumerate(parts):
        if part in PROTECTED_DIRS:
            return f"{path} is inside a {part}/ directory, which configures tools that run code"
        if part in PROTECTED_FILES:
            return f"{path} is a {part} file, which configures tools or shells that run code"
        for suffix in PROTECTED_SUFFIXES:
            if tuple(parts[index : index + len(suffix)]) == suffix:
                return f"{path} is inside {'/'.join(suffix)}/, which configures tools that run code"
    return None


def _within_folded(path: Path, directory: Path) -> bool:
    """`is_within`, ignoring case (the file system may)."""
    inner, outer = _fold(str(path)), _fold(str(directory)).rstrip("/")
    return inner == outer or inner.startswith(outer + "/")


def protected_write(
    path: Path,
    settings_files: Iterable[Path] = (),
    *,
    holds: bool = True,
    hooks_dirs: Iterable[Path] = (),
    resolved: Resolutions | None = None,
) -> str | None:
    """Why writing `path` must always be asked about, or None. Checks every resolved form of the path.
    `settings_files` must already include their resolved forms; `hooks_dirs` are git's `core.hooksPath`.

    `holds`: also when `path` is a directory that holds a settings file (removing or moving it).
    `resolved`: the decision's memo of resolutions (`resolved_forms`)."""
    settings = list(settings_files)  # already given in every resolved form (see RuleBook.settings_files)
    hooks = [form for h in hooks_dirs for form in resolved_forms(h, resolved)]
    for form in resolved_forms(path, resolved):
        if any(form == s or (holds and is_within(s, form)) for s in settings):
            return f"{form} is, or holds, a toolgate settings file"
        if any(_within_folded(form, h) or (holds and _within_folded(h, form)) for h in hooks):
            return f"{form} is in git's hooks directory (core.hooksPath), whose scripts git runs"
        reason = _protected_in(form)
        if reason is not None:
            return reason
        odd = suspicious_form(str(form))
        if odd is not None:
            return f"{form}: {odd}"
    return None


_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def git_hooks_dirs(workspace: Path, home: Path) -> list[Path]:
    """The `core.hooksPath` directories the repository's and the user's git configuration name (their scripts
    run on commit, checkout, ...). Read loosely: a `hooksPath` line in any section counts (it errs towards
    protecting). The default `.git/hooks` is protected as part of `.git/`."""
    found: list[Path] = []
    for config in (workspace / ".git" / "config", home / ".gitconfig"):
        try:
            text = config.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for match in _HOOKS_PATH.finditer(text):
            value = match.group(1).strip('"')
            target = Path(str(home) + value[1:]) if value.startswith("~") else Path(value)
            found.append(Path(os.path.normpath(target if target.is_absolute() else workspace / target)))
    return found


def protected_read(path: Path, resolved: Resolutions | None = None) -> str | None:
    """Why reading `path` must always be asked about (it holds credentials), or None. Every resolved form
    (`resolved`: the decision's memo of resolutions). On the forms as strings: `credential_reason` reads a path
    as its text, which is the same for a form and its `Path` (`resolved_texts`)."""
    for form in resolved_texts(path, resolved):
        reason = credential_reason(form)
        if reason is not None:
            return reason
    return None


def credential_text(raw: str, *, dotglob: bool = False) -> str | None:
    """Why a path only known at run time (`$HOME/.ssh/id_rsa`, `~user/.aws/credentials`, `~/.ss?/id_*`) looks
    like a credential file by the names written in it (a pattern: by a name it could match), or None."""
    # A backslash escapes the next character in a pattern; elsewhere it is read as a Windows separator.
    return credential_reason(PurePosixPath(raw if has_pattern(raw) else raw.replace("\\", "/")), dotglob=dotglob)


def _may_expand(word: str) -> bool:
    """Does bash expand this argument into a path before the program sees it ($, `, ~ or a pattern)?"""
    return "$" in word or "`" in word or word.startswith("~") or has_pattern(word)


def protected_glob_write(base: Path, tail: str, settings_files: Iterable[Path] = ()) -> str | None:
    """Why writing whatever `base/tail` expands to must always be asked about, or None.

    The pattern is matched loosely (`*` may cross `/` and match a leading dot here), so it errs towards asking.
    """
    if any(segment.startswith(".") for segment in tail.split("/")):
        return f"{base}/{tail} may expand to dot files such as .git or shell startup files"
    for form in resolved_forms(base):
        reason = _protected_in(form)
        if reason is not None:
            return reason
        pattern = f"{_fold(str(form))}/{_fold(tail)}"
        for settings in settings_files:
            if fnmatchcase(_fold(str(settings)), pattern):
                return f"{form}/{tail} may expand to the toolgate settings file {settings}"
    return None


def dangerous_removal(path: Path, home: Path, working_dirs: Iterable[Path]) -> str | None:
    """Removing `/`, a top-level directory, the home directory or a whole working directory always asks."""
    for form in resolved_forms(path):
        if form == Path("/") or form.parent == Path("/"):
            return f"it would remove {form}, a top-level system directory"
        if any(form == h for h in resolved_forms(home)):
            return f"it would remove {form}, the home directory"
        if any(form == w for d in working_dirs for w in resolved_forms(d)):
            return f"it would remove {form}, a whole working directory"
    return None


def _reads_home_tree(path: Path, home: Path, recursive: bool, resolved: Resolutions | None = None) -> str | None:
    if not recursive:
        return None
    # On strings: `within_text` answers as `is_within` on the forms `resolved_forms` would build.
    homes = resolved_texts(home, resolved)
    if any(within_text(h, form) for form in resolved_texts(path, resolved) for h in homes):
        return f"it reads everything below {path}, which holds the home directory's credentials (~/.ssh, ~/.aws, ...)"
    return None


def credential_read(facts: CallFacts, home: Path, resolved: Resolutions | None = None) -> str | None:
    """Why the call may read a credential file, or None: for Read, Grep and Glob their path, and for Bash
    every read form (files read, glob bases, arguments of programs that may read, paths only known when the
    command runs, and recursive reads of a tree that holds the home directory). `resolved`: the decision's
    memo of resolutions (`resolved_forms`)."""
    for path in facts.reads:
        reason = protected_read(path, resolved) or _reads_home_tree(path, home, facts.tool_name != "Read", resolved)
        if reason is not None:
            return f"it reads credentials: {reason}"
    for part in facts.bash.parts if facts.bash is not None else ():
        shown = f"`{part.text.strip()}`"
        for path in [*part.reads, *part.arg_paths]:
            reason = protected_read(path, resolved)
            if reason is not None:
                return f"{shown} may read credentials: {reason}"
        for path in part.tree_reads:
            reason = _reads_home_tree(path, home, True, resolved)
            if reason is not None:
                return f"{shown} may read credentials: {reason}"
        dotglob = facts.bash is not None and facts.bash.dotglob
        for glob in part.glob_reads:
            # The pattern below each resolved form of its base: `keys/id_*` where keys links to ~/.ssh.
            for form in resolved_forms(glob.base, resolved):
                reason = credential_reason(f"{form}/{glob.tail}", dotglob=dotglob)
                if reason is not None:
                    return f"{shown} may read credentials: {reason}"
        for raw in [*part.unresolved_reads, *(w for w in part.argv[1:] if _may_expand(w))]:
            reason = credential_text(raw.split(" (", 1)[0], dotglob=dotglob)
            if reason is not None:
                return f"{shown} may read credentials: {reason}"
        substituted = next((r for r in part.unresolved_reads if "$(" in r or "`" in r or "<(" in r), None)
        if substituted is not None:
            # `cat $(cat list)`: the path comes from a command that runs first, so it may be any file at all.
            return f"{shown} may read credentials: it reads {substituted}, which could name any file"
    return None


# --- destructive commands: asked in every mode, bypassPermissions included -----------------------------------

_DISK_TOOLS = ("mkfs", "wipefs", "mkswap", "fdisk", "sfdisk", "parted", "blkdiscard", "sgdisk")
_REMOVERS = frozenset({"rm", "shred", "unlink", "rmdir"})
_DEVICE_OK = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/fd/", "/dev/shm/")
_EVERYTHING = frozenset({".", "./", ":/", "*", ":/*"})


def _broad(path: Path, home: Path) -> bool:
    """`/`, a top-level directory, the home directory or anything that holds it."""
    for form in resolved_forms(path):
        if form == Path("/") or form.parent == Path("/"):
            return True
        if any(is_within(h, form) for h in resolved_forms(home)):
            return True
    return False


def _short_flags(words: Sequence[str]) -> str:
    return "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))


_GIT_CONFIG_WRITE_OPTIONS = frozenset(
    {"--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "--edit", "-e"}
)
_GIT_CONFIG_VALUED = frozenset({"--file", "-f", "--blob", "--type", "--default", "--value", "--comment"})


def _git_config_writes(args: Sequence[str]) -> bool:
    """Whether `git config ARGS` changes configuration (a setting there can make git run any program)."""
    if args and args[0] in ("set", "unset", "rename-section", "remove-section", "edit"):
        return True
    if any(w.partition("=")[0] in _GIT_CONFIG_WRITE_OPTIONS for w in args):
        return True
    if any(w in ("get", "list", "--get", "--get-all", "--get-regexp", "-l", "--list", "--get-urlmatch") for w in args):
        return False
    operands, skip = [], False
    for word in args:
        if skip:
            skip = False
        elif word in _GIT_CONFIG_VALUED:
            skip = True
        elif not word.startswith("-"):
            operands.append(word)
    return len(operands) >= 2


def _git_destruction(words: Sequence[str]) -> str | None:
    sub, args = (words[1], list(words[2:])) if len(words) > 1 else ("", [])
    flags = _short_flags(args)
    operands = [w for w in args if not w.startswith("-")]
    forced_clean = sub == "clean" and ("f" in flags or "--force" in args)
    # `-d` only adds untracked directories to the untracked files plain `git clean -f` removes; `-x`/`-X` reach
    # the ignored files (.env, local settings, virtualenvs), which nothing else would have kept.
    if forced_clean and "n" not in flags and "--dry-run" not in args and any(c in flags for c in "xX"):
        return "git clean -f with -x deletes ignored files too (.env, local settings), which git cannot bring back"
    if sub == "reset" and "--hard" in args:
        return "git reset --hard throws away uncommitted changes"
    # `git restore --staged` alone only unstages: the index changes, the files in the tree stay as they are.
    index_only = (
        sub == "restore" and ("S" in flags or "--staged" in args) and not ("W" in flags or "--worktree" in args)
    )
    if (
        sub in ("checkout", "restore")
        and not index_only
        and (set(operands) & _EVERYTHING or (sub == "checkout" and "f" in flags))
    ):
        return f"git {sub} over the whole tree throws away uncommitted changes"
    if sub == "config" and _git_config_writes(args):
        return "git config changes git's configuration, which can name programs git runs (hooks, pagers, ssh)"
    if sub == "push":
        forced = "f" in flags or any(w.startswith(("--force", "--mirror")) for w in args)
        if forced or any(w.startswith("+") for w in operands):
            return "a forced git push can overwrite commits on the remote that nobody else has"
    return None


def destructive_reason(words: Sequence[str], part_paths: Sequence[Path], home: Path, dynamic: bool) -> str | None:
    """Why the simple command `words` (one deny form: wrappers taken off) can destroy work beyond recovery, or
    None. `part_paths`: the paths its arguments resolve to (for find's start points and chmod's targets)."""
    if not words:
        return None
    name = words[0].rstrip("/").rsplit("/", 1)[-1]
    args = list(words[1:])
    broad = next((p for p in part_paths if _broad(p, home)), None)
    if name == "find":
        deletes = "-delete" in args or any(
            w in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(args) and Path(args[i + 1]).name in _REMOVERS
            for i, w in enumerate(args)
        )
        if deletes and broad is not None:
            return f"find deletes files below {broad}, which holds the system or your home directory"
        if deletes and dynamic:
            return "find deletes files below a directory only known when it runs"
    recursive = "R" in _short_flags(args) or "--recursive" in args
    if name in ("chmod", "chown", "chgrp") and recursive and broad is not None:
        return f"{name} -R changes every file below {broad}, which holds the system or your home directory"
    if name == "git":
        return _git_destruction(words)
    if name == "dd" and any(w.startswith("of=/dev/") and not w[3:].startswith(_DEVICE_OK) for w in args):
        return "dd writes straight to a device, destroying what is on it"
    if name.startswith(_DISK_TOOLS):
        return f"{name} rewrites a disk or partition"
    return None


def device_write(paths: Sequence[Path]) -> str | None:
    for path in paths:
        text = str(path)
        if text.startswith("/dev/") and not (text + "/").startswith(_DEVICE_OK) and text not in _DEVICE_OK:
            return f"it writes straight to the device {text}, destroying what is on it"
    return None
