"""The tree a session's index describes, remembered beside it (`index-<session>.tree`), so that an unchanged work
tree costs no `write-tree` and a changed one is made from the last tree in-process (tree_edit.py).

The two files are written one after the other (git writes the index, then this module the companion), so a crash
can leave them out of step: the index written, the companion naming the tree before; or, for an index put back
from elsewhere, the other way round. Trusting such a companion would give a checkpoint the wrong tree. So the
companion names the index it was made for by the checksum git writes at the end of every index (the SHA-1 of all
before it, which covers the entries, their stat data and a split index's link to its shared part): a companion
whose index has changed since, is torn, or is not there describes nothing, and git writes the tree from the index.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

_CHECKSUM_BYTES = 20  # SHA-1: stores of another object format are refused (ShadowGit.check_object_format)
_UNWRITTEN = bytes(_CHECKSUM_BYTES)  # what git writes instead of the checksum when index.skipHash is on
_RECORD = re.compile(rb"tree ([0-9a-f]{40}) index ([0-9a-f]{40})\n")


def companion(index: Path) -> Path:
    return index.with_name(index.name + ".tree")


def index_checksum(index: Path) -> str | None:
    """The checksum at the end of the index file; None when there is none to read (no file, too short, or not
    written), so nothing can be trusted to match it."""
    try:
        with open(index, "rb") as handle:
            handle.seek(-_CHECKSUM_BYTES, os.SEEK_END)
            tail = handle.read(_CHECKSUM_BYTES)
    except OSError:  # no index, or one shorter than a checksum (seek before the start)
        return None
    return tail.hex() if len(tail) == _CHECKSUM_BYTES and tail != _UNWRITTEN else None


def remembered_tree(index: Path, checksum: str | None) -> str | None:
    """The tree the companion names, when it was made for the index whose checksum is `checksum`; else None."""
    if checksum is None:
        return None
    try:
        found = _RECORD.fullmatch(companion(index).read_bytes())
    except OSError:
        return None
    if found is None or found.group(2).decode() != checksum:
        return None  # torn, or made for another index: the index was written and the companion not (or back)
    return found.group(1).decode()


def remember_tree(index: Path, tree: str, checksum: str | None) -> None:
    """Record that the index whose checksum is `checksum` (read after git last wrote it) describes `tree`. A
    crash mid-write leaves a torn record, which matches no index."""
    if checksum is None:
        forget_tree(index)
    else:
        companion(index).write_bytes(b"tree %s index %s\n" % (tree.encode(), checksum.encode()))


def forget_tree(index: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        companion(index).unlink()
