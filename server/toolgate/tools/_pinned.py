"""Holding a file tool to the real path its permission decision saw (`ToolContext.pinned`), in the model's words.

The runner pins each path of a call right before deciding it; between that decision and the read or write (a
person reviewing a diff for seconds, a background command still running) a folder on the way may be swapped for a
symbolic link to somewhere else. Writes then go to the pinned place, reached without following a link
(`_write.stage`), and reads compare the file they opened with the pin; either refuses when the path no longer
leads where it did. This module says what changed, that nothing happened, and what to do next.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolgate.core.errors import StateError
from toolgate.core.paths import display_path, real_path

Action = Literal["written", "read", "searched"]


def require_pinned(path: Path, pinned: str | None, shown: str, workspace: Path, action: Action) -> str:
    """`path`'s real path now; a StateError when a pin says the decision saw another one."""
    now = real_path(path)
    if pinned is not None and now != pinned:
        raise moved_error(path, pinned, now, shown, workspace, action)
    return now


@dataclass(slots=True)
class OpenedCheck:
    """Called with the descriptor of the file a read opened: it must be the one the decision saw (its
    /proc/self/fd entry names the pinned path), or a StateError says what changed and nothing is read.

    Without a pin (a call the runner did not decide: nothing was approved to hold it to) or without /proc there is
    nothing to compare with. One readlink, no stat: a small file is still read with one open and one fstat."""

    path: Path
    pinned: str | None
    shown: str
    workspace: Path
    # Set when a descriptor was seen to be the pinned file: its real path is then known to be `pinned`, and the
    # reader need not resolve the path again (an open and a readlink) to name its readFileState record.
    confirmed: bool = False

    def __call__(self, fd: int) -> None:
        if self.pinned is None:
            return
        try:
            now = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return
        now = now.removesuffix(" (deleted)")  # removed since it was opened: still the file that was pinned
        if now != self.pinned:
            raise moved_error(self.path, self.pinned, now, self.shown, self.workspace, "read")
        self.confirmed = True


def moved_error(path: Path, pinned: str, now: str, shown: str, workspace: Path, action: Action) -> StateError:
    """What changed on the way to `path` since the decision (`pinned`: where it led then, `now`: where it leads)."""
    changed = _changed_link(path, pinned, workspace, shown)
    if changed is None:
        changed = (
            f"{shown} led to {pinned} when this call was approved and leads to {now} now: a folder on the way "
            "changed after the permission check"
        )
    return StateError(f"{changed}. Nothing was {action}. {_next_step(action)}")


def swapped_folder_error(
    folder: str, shown: str, workspace: Path | None, action: Action, *, is_link: bool = True
) -> StateError:
    """A folder on the pinned way (absolute) was found to be a symbolic link (or a file) while it was walked."""
    where = Path(folder)
    named = display_path(where, workspace) if workspace is not None else folder
    became = f"a symbolic link{_link_target(where)}" if is_link else "a file"
    return StateError(
        f"{named} on the way to {shown} became {became} after the permission check. Nothing was {action}. "
        f"{_next_step(action)}"
    )


def swapped_name_error(shown: str, link: Path, action: Action) -> StateError:
    """The pinned path itself was found to be a symbolic link (its pin is a real path: it was none then)."""
    return StateError(
        f"{shown} itself is now a symbolic link{_link_target(link)}, not where it led when this call was approved. "
        f"Nothing was {action}. {_next_step(action)}"
    )


_VERBS: dict[Action, str] = {"written": "write", "read": "read", "searched": "search"}


def _next_step(action: Action) -> str:
    verb = _VERBS[action]
    return (
        "Check that folder (a command started earlier may have replaced it). If you still mean to "
        f"{verb} there, call again: the new call is judged on where the link leads now."
    )


def _changed_link(path: Path, pinned: str, workspace: Path, shown: str) -> str | None:
    """The first link on `path`'s way (or at its name) that now leads away from where the decision saw it."""
    parts = path.parts
    for depth in range(2, len(parts) + 1):
        step = Path(*parts[:depth])
        if not step.is_symlink():
            continue
        real = real_path(step)
        if pinned == real or pinned.startswith(real.rstrip("/") + "/"):
            continue  # this link still leads where the decision saw the path go
        target = _link_target(step)
        if depth == len(parts):
            return f"{shown} itself is now a symbolic link{target}, not where it led when this call was approved"
        folder = display_path(step, workspace)
        return f"{folder} on the way to {shown} became a symbolic link{target} after the permission check"
    return None


def _link_target(link: Path) -> str:
    try:
        return f" to {os.readlink(link)}"
    except OSError:
        return ""
