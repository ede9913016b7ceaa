"""Safety checks that no mode and no allow rule skips: they always ask a person.

Writes to places that configure code execution or toolgate itself (`.git/`, `.vscode/`, `.idea/`,
`.toolgate/`, settings files, shell startup files, `.gitconfig`, `.gitmodules`, `.mcp.json`, ...), and paths
written in forms that can name a different file than they appear to (Windows short names, alternate data
streams, trailing dots, device names, UNC shares). Every form of a path (as given, and with symlinks
resolved) is checked, and names are compared case-insensitively (macOS and Windows file systems ignore case).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from toolgate.core.paths import is_within, resolved_forms

PROTECTED_DIRS = frozenset({".git", ".vscode", ".idea", ".toolgate", ".hg", ".svn"})
PROTECTED_FILES = frozenset(
    {
        ".gitconfig", ".gitmodules", ".mcp.json", ".envrc", ".ripgreprc",
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
        ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc",
    }
)  # fmt: skip
# Directories (relative to anywhere) whose files configure tools that run code: git's and fish's configs.
PROTECTED_SUFFIXES = ((".config", "git"), (".config", "fish"), (".ssh",))

_SHORT_NAME = re.compile(r"~\d")  # PROGRA~1: a Windows 8.3 name that may alias a protected one
_DEVICE = re.compile(r"^(con|prn|aux|nul|com\d|lpt\d|conin\$|conout\$)(\..*)?$", re.IGNORECASE)


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


def suspicious_form(raw: str) -> str | None:
    """Why a path *as written* is suspicious, or None."""
    text = raw.replace("\\", "/")
    if text.startswith("//") and not text.startswith("///"):
        return "it is a network (UNC) path"
    parts = [p for p in text.split("/") if p]
    for part in parts:
        if part not in (".", "..") and (part.endswith(".") or part.endswith(" ")):
            return f"the name {part!r} ends with a dot or space, which Windows drops (it can alias another file)"
        if part.startswith("...") and set(part) == {"."}:
            return f"the name {part!r} is only dots"
        if _SHORT_NAME.search(part):
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


def protected_write(path: Path, settings_files: Iterable[Path] = (), *, holds: bool = True) -> str | None:
    """Why writing `path` must always be asked about, or None. Checks every resolved form of the path.
    `settings_files` must already include their resolved forms.

    `holds`: also when `path` is a directory that holds a settings file (removing or moving it)."""
    settings = list(settings_files)  # already given in every resolved form (see RuleBook.settings_files)
    for form in resolved_forms(path):
        if any(form == s or (holds and is_within(s, form)) for s in settings):
            return f"{form} is, or holds, a toolgate settings file"
        reason = _protected_in(form)
        if reason is not None:
            return reason
        odd = suspicious_form(str(form))
        if odd is not None:
            return f"{form}: {odd}"
    return None


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
