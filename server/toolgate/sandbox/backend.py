"""Sandbox backends: the one thing that turns a policy into a command prefix on this platform.

Linux has bubblewrap. A macOS Seatbelt backend (`sandbox-exec -p PROFILE`) would implement the same
`SandboxBackend` protocol; until one exists, other platforms get `Unavailable`, whose status says why, and
nothing is ever auto-allowed on its account.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from toolgate.sandbox.policy import Kind, PathKind, SandboxPlan, SandboxPolicy, build_plan

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`)"
_PROBE_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class BackendStatus:
    available: bool
    backend: str  # "bubblewrap", or "none"
    detail: str  # what it is (version, path) or why it cannot run, with what to do


class SandboxBackend(Protocol):
    name: str

    def status(self) -> BackendStatus: ...

    def plan(self, policy: SandboxPolicy, kinds: PathKind | None = None) -> SandboxPlan: ...


def path_kind(path: Path) -> Kind:
    """The file system fact the pure policy builder asks about (symbolic links are not followed)."""
    # Most of the paths asked about (every launch asks again) are absent: `access` says so without the exception a
    # failed lstat costs, which was most of the time a launch spent here.
    if not os.access(path, os.F_OK, follow_symlinks=False):
        return "absent"
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "absent"
    if stat.S_ISLNK(mode):
        return "link"
    return "dir" if stat.S_ISDIR(mode) else "file"


class Bubblewrap:
    name = "bubblewrap"

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self._status: BackendStatus | None = None

    def status(self) -> BackendStatus:
        if self._status is None:
            self._status = self._probe()
        return self._status

    def _probe(self) -> BackendStatus:
        """Start a trivial sandbox with the options every real one uses: user namespaces may be disabled, or
        this bwrap too old for an option, and either must show up here rather than as a failed command."""
        argv = [
            self.executable, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--cap-drop", "ALL",
            "--", "/bin/true",
        ]  # fmt: skip
        try:
            done = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return BackendStatus(False, self.name, f"{self.executable} could not start a sandbox ({exc})")
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
            return BackendStatus(
                False,
                self.name,
                f"{self.executable} could not start a sandbox: {why}. Unprivileged user namespaces may be "
                "disabled (sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces), or this bwrap "
                "is older than 0.8 (needs --disable-userns).",
            )
        return BackendStatus(True, self.name, self.executable)

    def plan(self, policy: SandboxPolicy, kinds: PathKind | None = None) -> SandboxPlan:
        """`kinds`: how to look at the file system (default `path_kind`; runtime.py records what it asked)."""
        return build_plan(policy, kinds or path_kind, self.executable)


class Unavailable:
    name = "none"

    def __init__(self, detail: str) -> None:
        self.detail = detail

    def status(self) -> BackendStatus:
        return BackendStatus(False, self.name, self.detail)

    def plan(self, policy: SandboxPolicy, kinds: PathKind | None = None) -> SandboxPlan:
        raise RuntimeError(f"there is no sandbox on this machine: {self.detail}")


def detect_backend(path_env: str | None = None, platform: str = sys.platform) -> SandboxBackend:
    """The backend for this platform, looked up on `path_env` (default: this process's PATH)."""
    if not platform.startswith("linux"):
        return Unavailable(f"no sandbox backend exists for {platform} yet, so commands run without one")
    found = shutil.which("bwrap", path=path_env if path_env is not None else os.environ.get("PATH", os.defpath))
    if found is None:
        return Unavailable(f"bwrap was not found on PATH; {INSTALL_HINT}")
    return Bubblewrap(found)
