"""Turning what a model wrote into an absolute path, and asking whether a path is inside a directory."""

from __future__ import annotations

import functools
import os
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path

from toolgate.core.errors import StateError


@functools.lru_cache(maxsize=512)
def expand_path(raw: str, base: Path, home: Path) -> Path:
    """Absolute, normalised form of `raw`: `~` expanded, relative paths joined to `base`, `..` folded.

    Symlinks are *not* resolved here (that is I/O and would hide what the model asked for); callers that
    decide permissions resolve separately. A NUL byte is refused: no filesystem accepts it, and a path
    that silently stops at it would name a different file.

    Pure (no I/O), so remembered: one call expands its path three times (the tool's paths, its validation, its
    run), and a session names the same few paths again and again.
    """
    if "\x00" in raw:
        raise StateError("The path contains a NUL byte, which no file name can contain. Send the path without it.")
    text = unicodedata.normalize("NFC", raw.strip())
    if not text:
        raise StateError("The path is empty. Send an absolute path, or one relative to the workspace.")
    if text == "~" or text.startswith("~/"):
        text = str(home) + text[1:]
    path = Path(text)
    if not path.is_absolute():
        path = base / path
    return Path(os.path.normpath(path))


def is_within(path: Path, directory: Path) -> bool:
    """True when `path` equals `directory` or lies under it (both taken as given: resolve them first)."""
    try:
        path.relative_to(directory)
    except ValueError:
        return False
    return True


# Linux names an open file's path under /proc/self/fd; O_PATH opens a path without reading it (nor opening a
# device or FIFO).
_KERNEL_PATHS = sys.platform == "linux" and hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")


def real_path(path: str | os.PathLike[str]) -> str:
    """`os.path.realpath(path)`: every symlink resolved, `..` taken after the link before it.

    When the path exists, the kernel answers: one open of it (O_PATH) and one readlink of its /proc/self/fd entry,
    where realpath lstat()s every component (most of a permission check's time on a plain Read). Anything else
    (a part missing, a loop, no access, not a name of a file system object, no /proc) is realpath's own answer.
    """
    if _KERNEL_PATHS:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except (OSError, ValueError):
            return os.path.realpath(path)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            real = ""
        finally:
            os.close(fd)
        # Not a path (a pipe or socket reached through /proc/*/fd), or removed meanwhile: realpath's answer.
        if real.startswith("/") and not real.endswith(" (deleted)"):
            return real
    return os.path.realpath(path)


Resolutions = dict[str, tuple[str, ...]]  # one check's memo: each path's resolved forms, by the path as written


def pinned_resolutions(pinned: Mapping[Path, str]) -> Resolutions:
    """A decision's memo seeded with a call's pinned real paths (`ToolContext.pinned`): the decision judges the
    very real paths the file tools will then hold the call to, not a second look that a swap could fall between."""
    memo: Resolutions = {}
    for path, real in pinned.items():
        given = os.path.normpath(os.fspath(path))
        memo[os.fspath(path)] = (given,) if given == real else (given, real)
    return memo


def resolved_forms(path: Path, resolved: Resolutions | None = None) -> list[Path]:
    """The path as given (normalised) and with every symlink resolved; both must pass a containment check.

    `resolved`: the memo of the one check this is part of (its steps ask about the same path several times).
    Never keep one across checks: a symlink swapped between two calls must be seen at once."""
    return [Path(form) for form in resolved_texts(path, resolved)]


def inside_any(path: Path, directories: Iterable[Path], resolved: Resolutions | None = None) -> bool:
    """Every resolved form of `path` lies inside one of the (resolved) `directories`.

    Resolved afresh on every call (a swapped symlink must be seen at once), but on strings: pathlib's parsing
    of the forms was most of the cost of the check the Bash tool makes before every command. `resolved`: as
    for `resolved_forms`; without it, this call's own (the path is often a directory itself)."""
    resolved = {} if resolved is None else resolved
    return texts_inside(resolved_texts(path, resolved), directories, resolved)


def texts_inside(forms: Iterable[str], directories: Iterable[Path], resolved: Resolutions) -> bool:
    """Every one of `forms` (a path's `resolved_texts`) lies inside a resolved form of one of `directories`.

    The answer of comparing each form with every form of every directory, with less I/O: a directory's form as
    given (normalised, no I/O) is one of its forms, so each path form is first compared with those, and the
    directories' real paths are resolved (a syscall each; the largest cost of a plain Read's decision) only for a
    form outside all of them: a path through a link, or a working directory that is one. `resolved`: the
    decision's memo, as for `resolved_forms`; nothing is kept beyond it."""
    directories = list(directories)
    given = [os.path.normpath(os.fspath(d)) for d in directories]  # the first of each one's `resolved_texts`
    rest = [form for form in forms if not any(within_text(form, root) for root in given)]
    if not rest:
        return True
    roots = [root for d in directories for root in resolved_texts(d, resolved)]
    return all(any(within_text(form, root) for root in roots) for form in rest)


def resolved_texts(path: Path, resolved: Resolutions | None = None) -> tuple[str, ...]:
    """`resolved_forms` as strings, for checks that only compare them: building a `Path` of each form was most of
    a permission decision's time on a plain Read. `str(form)` of each of `resolved_forms` is the same text."""
    text = os.fspath(path)  # the key as written: `link/..` must be resolved, not folded to `.` first
    if resolved is not None and (known := resolved.get(text)) is not None:
        return known
    given = os.path.normpath(text)
    real = real_path(text)
    forms = (given,) if given == real else (given, real)
    if resolved is not None:
        resolved[text] = forms
    return forms


def within_text(path: str, directory: str) -> bool:
    """`is_within` for the normalised strings `resolved_texts` makes. Anything else (relative, or the
    `//` root POSIX leaves to the system) goes to `is_within`, so both always answer alike."""
    if path[:1] != "/" or directory[:1] != "/" or path[:2] == "//" or directory[:2] == "//":
        return is_within(Path(path), Path(directory))
    return path == directory or path.startswith(directory if directory == "/" else directory + "/")


def display_input_path(raw: str, workspace: Path) -> str:
    """A path as the model wrote it, shortened for a person when it is absolute and inside the workspace."""
    if not raw.startswith("/") or "\x00" in raw:
        return raw
    return display_path(Path(os.path.normpath(raw)), workspace)


def display_path(path: Path, workspace: Path) -> str:
    """Relative to the workspace when inside it (shorter for a model to read), absolute otherwise."""
    text, root = os.fspath(path), os.fspath(workspace)
    if _plain_absolute(text) and _plain_absolute(root):
        # On strings: this runs several times for every call, and pathlib's parsing was most of its cost.
        inside = root.rstrip("/") + "/"
        return text[len(inside) :] if text.startswith(inside) and text != inside else text
    if is_within(path, workspace) and path != workspace:
        return str(path.relative_to(workspace))
    return str(path)


@functools.lru_cache(maxsize=1024)
def _plain_absolute(text: str) -> bool:
    """Absolute and normalised (what `expand_path` makes): string operations answer as pathlib would.

    Pure, so remembered: a call shows the same path and workspace several times (its validation, its run, the
    permission check), and a normpath each time was half of `display_path`."""
    return text[:1] == "/" and text[:2] != "//" and text == os.path.normpath(text)
