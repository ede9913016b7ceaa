"""What Glob and Grep share: the directory to search (opened where the permission decision saw it), showing
ripgrep's paths, and newest-first order."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from toolgate.core.beneath import NotAFolder, parent_beneath
from toolgate.core.context import ToolContext
from toolgate.core.credentials import credential_reason, none_among
from toolgate.core.errors import StateError
from toolgate.core.paths import display_path
from toolgate.core.permission import ReadGuard
from toolgate.tools._files import missing_message
from toolgate.tools._pinned import require_pinned, swapped_folder_error, swapped_name_error
from toolgate.tools._ripgrep import SearchAt

# ripgrep reaches an opened folder through /proc/self/fd (Linux); O_PATH opens one to pass through, not to read.
_OPENED_ROOTS = sys.platform == "linux" and hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")


def search_root(raw: str | None, ctx: ToolContext) -> Path:
    """The absolute directory (or, for Grep, file) to search: the workspace when `raw` is empty."""
    return ctx.resolve_path(raw) if raw and raw.strip() else ctx.workspace


def check_search_root(root: Path, ctx: ToolContext, *, files_allowed: bool) -> None:
    """A missing root is an error with near names; a file is one only where a directory is needed."""
    try:
        st = os.stat(root)
    except (FileNotFoundError, NotADirectoryError):
        what = "file or directory" if files_allowed else "directory"
        raise StateError(missing_message(root, ctx, what=what)) from None
    except OSError as exc:
        raise StateError(f"{root} cannot be searched: {exc.strerror or exc}.") from None
    if not files_allowed and not stat.S_ISDIR(st.st_mode):
        raise StateError(
            f"{display_path(root, ctx.workspace)} is a file, not a directory. Give its directory as path, "
            "or use Read to see the file."
        )


def open_search_root(root: Path, ctx: ToolContext) -> SearchAt:
    """Where ripgrep searches `root`: the real path the permission decision saw (`ToolContext.pinned`; a call the
    runner did not decide is pinned now), opened by walking it from `/` without following a symbolic link, so a
    folder swapped for a link after the decision cannot send the search outside what was approved.

    A StateError, and nothing searched, when `root` leads elsewhere now, or a folder on the way (or the root
    itself) became a link or a file. Close the result (`Ripgrep.run` does once ripgrep started)."""
    shown = "the workspace" if root == ctx.workspace else display_path(root, ctx.workspace)
    # Where it leads now, refused unless that is where the decision saw it lead.
    now = require_pinned(root, ctx.pinned.get(root), shown, ctx.workspace, "searched")
    if not _OPENED_ROOTS:
        # Nothing to hand ripgrep an opened folder through: it looks the name up itself, as it always did; the
        # check above still refuses a root that leads elsewhere than its decision saw.
        return SearchAt.by_name(root)
    target = os.fsencode(now)
    try:
        fd = _open_real(target)
    except NotAFolder as exc:
        raise swapped_folder_error("/" + exc.folder, shown, ctx.workspace, "searched", is_link=exc.is_link) from None
    except (FileNotFoundError, NotADirectoryError):
        raise StateError(missing_message(root, ctx, what="file or directory") + " Nothing was searched.") from None
    except OSError as exc:
        raise StateError(f"{shown} cannot be searched: {exc.strerror or exc}. Nothing was searched.") from None
    try:
        mode = os.fstat(fd).st_mode
    except BaseException:
        os.close(fd)
        raise
    if stat.S_ISLNK(mode):  # the real path's own name became a link (to anywhere: not followed)
        os.close(fd)
        raise swapped_name_error(shown, Path(os.fsdecode(target)), "searched")
    return SearchAt.in_folder(root, fd) if stat.S_ISDIR(mode) else SearchAt.of_file(root, fd)


def _open_real(real: bytes) -> int:
    """An O_PATH descriptor of what the real path `real` names, its folders walked from `/` without following a
    link (NotAFolder for a link or a file on the way); a link at its own name is opened as the link itself."""
    flags = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
    if real == b"/":
        return os.open(real, flags)
    folder, name = parent_beneath(b"/", real.lstrip(b"/"))
    try:
        return os.open(name, flags, dir_fd=folder)
    finally:
        os.close(folder)


class PathShower:
    """ripgrep prints the paths under the root exactly as it was given; show them relative to the workspace."""

    def __init__(self, workspace: Path) -> None:
        self._prefix = os.fsencode(workspace).rstrip(b"/") + b"/"
        self._cache: dict[bytes, str] = {}

    def __call__(self, raw: bytes) -> str:
        shown = self._cache.get(raw)
        if shown is None:
            relative = raw[len(self._prefix) :] if raw.startswith(self._prefix) else raw
            shown = relative.decode("utf-8", errors="replace")
            self._cache[raw] = shown
        return shown


def relative_to_root(raw: bytes, root_prefix: bytes) -> str:
    """A path from ripgrep as a `/`-separated path below the search root (for glob matching)."""
    return raw[len(root_prefix) :].decode("utf-8", errors="surrogateescape")


def root_prefix(root: Path) -> bytes:
    return os.fsencode(root).rstrip(b"/") + b"/"


def newest_first(paths: Sequence[bytes]) -> list[bytes]:
    """Most recently modified first; ties (and files that vanished, counted as oldest) in path order."""
    return [p for _, p in sorted((-_mtime_ns(p), p) for p in paths)]


def _mtime_ns(path: bytes) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


class ReadDenyFilter:
    """Leaves out files that a Read deny (or ask) rule protects, and credential files (core/credentials.py:
    `.env`, `~/.ssh/id_*`, ...; reading them directly asks in every mode), and counts them, so the result can
    say so: a search must not reveal what Read may not show, and must not hide anything silently either."""

    def __init__(self, guard: ReadGuard | None, *, credentials: bool) -> None:
        self._guard = guard
        self._check_credentials = credentials
        self.hidden = 0
        self.credentials = 0
        self._verdicts: dict[bytes, bool] = {}

    @classmethod
    def for_session(cls, ctx: ToolContext, *, credentials: bool) -> ReadDenyFilter | None:
        """`credentials`: also leave out credential files (Grep, which shows content; Glob shows only names).
        None when nothing needs leaving out."""
        policy = ctx.session.policy
        guard = policy if isinstance(policy, ReadGuard) and policy.guards_reads() else None
        return cls(guard, credentials=credentials) if guard is not None or credentials else None

    def vouch(self, paths: list[bytes]) -> None:
        """Decide for all of `paths` at once when one pass proves that none is a credential file and no Read rule
        needs asking (the usual search): each is then kept without a check of its own."""
        if self._guard is None and none_among(paths):
            self._verdicts.update(dict.fromkeys(paths, True))

    def __call__(self, raw: bytes) -> bool:
        allowed = self._verdicts.get(raw)
        if allowed is None:
            path = os.fsdecode(raw)
            allowed = self._guard is None or self._guard.read_denied(Path(path)) is None
            self.hidden += not allowed
            if allowed and self._check_credentials and credential_reason(path) is not None:
                allowed = False
                self.credentials += 1
            self._verdicts[raw] = allowed
        return allowed

    def note(self) -> str:
        notes = []
        if self.hidden:
            files = "file is" if self.hidden == 1 else "files are"
            notes.append(f"{self.hidden:,} matching {files} left out because permission rules forbid reading them.")
        if self.credentials:
            files = "file is" if self.credentials == 1 else "files are"
            notes.append(
                f"{self.credentials:,} matching {files} left out because they hold credentials (.env files, keys); "
                "reading one with Read asks the user first."
            )
        return " ".join(notes)


def join_notes(body: str, notes: Iterable[str]) -> str:
    """The result, then each note in brackets after a blank line (where a reader looks for the summary)."""
    lines = [f"[{note}]" for note in notes if note]
    return "\n\n".join([body, "\n".join(lines)]) if lines and body else body or "\n".join(lines)
