"""What a directory holds, as a test compares it: bytes, the executable bit and link targets, per path."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

Snapshot = dict[bytes, tuple[str, bytes, bool]]


def snapshot(root: Path, skip: tuple[bytes, ...] = (b".git",)) -> Snapshot:
    """Every file and link under `root` (not into `skip` directories): kind, content or target, executable."""
    found: Snapshot = {}
    base = os.fsencode(root)
    for top, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d not in skip and not os.path.islink(os.path.join(top, d))]
        names = files + [d for d in os.listdir(top) if os.path.islink(os.path.join(top, d)) and d not in files]
        for name in names:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, base)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path), False)
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    found[rel] = ("file", handle.read(), bool(info.st_mode & 0o100))
    return found


def directories(root: Path) -> set[bytes]:
    base = os.fsencode(root)
    return {
        os.path.relpath(os.path.join(top, d), base)
        for top, dirs, _files in os.walk(base)
        for d in dirs
        if not os.path.islink(os.path.join(top, d)) and b".git" not in os.path.join(top, d).split(b"/")
    }


def git(cwd: Path, *args: str) -> bytes:
    """The user's own git, as a person would run it (no config of the machine's user, a fixed identity)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True).stdout
