"""Does the repository a git command would open name programs in its own configuration?

The git table (bash/programs/git.py) calls `git status`, `git diff`, `git log -p` read-only; that holds only
while the repository's configuration names no program for them to run (bash/programs/git_config.py lists
which entries do). This module finds the repository the way git discovers it from a directory (a `.git`
directory, a `.git` file pointing elsewhere, or a bare repository), and reads its configuration files: the
repository's own, its worktree's, and its submodules' (git status recurses into submodules). The person's
global and system configuration are their own choice and are not read.

I/O: a few small files per git command. The permission engine does not keep such answers (they can change
between calls), so each call looks again.
"""

from __future__ import annotations

from pathlib import Path

from toolgate.bash.programs.git_config import programs_in_config

__all__ = ["configured_program"]

MAX_CONFIG_BYTES = 1 << 20  # a larger configuration file is not read: it counts as unreadable (fail closed)
MAX_SUBMODULE_CONFIGS = 64


def _git_dir(start: Path) -> Path | None:
    """The repository directory git would open when run in `start` (None: not inside a repository)."""
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = _read(dot_git) or ""
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (directory / target)
            return dot_git  # unreadable: its own path, whose config cannot be read, so it counts
        if (directory / "HEAD").is_file() and (directory / "objects").is_dir() and (directory / "refs").is_dir():
            return directory  # a bare repository (git discovers those too)
    return None


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _config_files(git_dir: Path) -> list[Path]:
    files = [git_dir / "config", git_dir / "config.worktree"]
    common = _read(git_dir / "commondir")
    if common is not None:
        common_dir = Path(common.strip())
        common_dir = common_dir if common_dir.is_absolute() else git_dir / common_dir
        files += [common_dir / "config", common_dir / "config.worktree"]
    modules = git_dir / "modules"
    if modules.is_dir():
        files += sorted(modules.rglob("config"))[:MAX_SUBMODULE_CONFIGS]
    return files


def configured_program(cwd: Path, *, network: bool = False) -> str | None:
    """Why git run in `cwd` may run a program its repository's configuration names (None: it names none)."""
    git_dir = _git_dir(cwd)
    if git_dir is None:
        return None
    for config in _config_files(git_dir):
        if not config.exists():
            continue
        text = _read(config)
        found = ["?"] if text is None else programs_in_config(text, network=network)
        if found:
            what = "an entry this checker cannot read" if found[0] == "?" else found[0]
            return (
                f"the repository's configuration {config} has {what}, which names a program or file git would "
                "run or load for this command"
            )
    return None
