"""Turning what a model wrote into an absolute path, and asking whether a path is inside a directory."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from toolgate.core.errors import StateError


def expand_path(raw: str, base: Path, home: Path) -> Path:
    """Absolute, normalised form of `raw`: `~` expanded, relative paths joined to `base`, `..` folded.

    Symlinks are *not* resolved here (that is I/O and would hide what the model asked for); callers that
    decide permissions resolve separately. A NUL byte is refused: no filesystem accepts it, and a path
    that silently stops at it would name a different file.
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


def resolved_forms(path: Path) -> list[Path]:
    """The path as given (normalised) and with every symlink resolved; both must pass a containment check."""
    given = Path(os.path.normpath(path))
    real = Path(os.path.realpath(path))
    return [given] if given == real else [given, real]


def inside_any(path: Path, directories: Iterable[Path]) -> bool:
    """Every resolved form of `path` lies inside one of the (resolved) `directories`."""
    roots = [form for d in directories for form in resolved_forms(d)]
    return all(any(is_within(form, root) for root in roots) for form in resolved_forms(path))


def display_input_path(raw: str, workspace: Path) -> str:
    """A path as the model wrote it, shortened for a person when it is absolute and inside the workspace."""
    if not raw.startswith("/") or "\x00" in raw:
        return raw
    return display_path(Path(os.path.normpath(raw)), workspace)


def display_path(path: Path, workspace: Path) -> str:
    """Relative to the workspace when inside it (shorter for a model to read), absolute otherwise."""
    if is_within(path, workspace) and path != workspace:
        return str(path.relative_to(workspace))
    return str(path)
