"""The tree a session's index describes, remembered beside it (`index-<session>.tree`), so that an unchanged work
tree costs no `write-tree` and a changed one is made from the last tree in-process (tree_edit.py).

The two files are written one after the other (git writes the index, then this module the companion), so a crash
can leave them out of step: the index written, the companion naming the tree before; or, for an index put back
from elsewhere, the other way round. Trusting such a companion would give a checkpoint the wrong tree. So the
companion names the index it was made for by the checksum git writes at the end of every index (the SHA-1 of all
before it, which covers the entries, their stat data and a split index's link to its shared part): a companion
whose index has changed since, is torn, or is not there describes nothing, and git writes the tree from the index.

The record has one length and is written over the old one in place: truncating a file and writing it again makes
ext4 push its blocks to disk at once (its guard for programs that replace files that way), which cost 2-3 ms a
checkpoint, as did a new file renamed into place; writing in place costs microseconds. A write cut short can then
leave the new record's start over the old one's end, which could pair the old tree with the new index: the
record's own CRC-32 tells such a mix from a record written whole.
"""

from __future__ import annotations

import contextlib
import os
import re
import zlib
from pathlib import Path

_CHECKSUM_BYTES = 20  # SHA-1: stores of another object format are refused (ShadowGit.check_object_format)
_UNWRITTEN = bytes(_CHECKSUM_BYTES)  # what git writes instead of the checksum when index.skipHash is on
_RECORD = re.compile(rb"(tree ([0-9a-f]{40}) index ([0-9a-f]{40})) crc ([0-9a-f]{8})\n")


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
    if found is None or int(found.group(4), 16) != zlib.crc32(found.group(1)):
        return None  # torn: cut short, or the start of one record over the end of another
    if found.group(3).decode() != checksum:
        return None  # made for another index: the index was written and the companion not (or back)
    return found.group(2).decode()


def remember_tree(index: Path, tree: str, checksum: str | None) -> None:
    """Record that the index whose checksum is `checksum` (read after git last wrote it) describes `tree`."""
    if checksum is None:
        forget_tree(index)
        return
    fields = b"tree %s index %s" % (tree.encode(), checksum.encode())
    record = b"%s crc %08x\n" % (fields, zlib.crc32(fields))
    handle = os.open(companion(index), os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.pwrite(handle, record, 0)
        os.ftruncate(handle, len(record))  # a longer file (a record of another form) would match nothing
    finally:
        os.close(handle)


def forget_tree(index: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        companion(index).unlink()
