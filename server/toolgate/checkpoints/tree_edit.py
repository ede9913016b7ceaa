"""A tree made from the one before by changing a few entries, written in-process: what `git write-tree` would
write for an index that is the old tree plus those entries, without a process per checkpoint.

Only the trees along the changed paths are read and written again; each must be a loose object (the last
checkpoint's trees are, until a gc packs them). When one is not, or the change is one this module does not
make (a file and a directory trading places under one name), the answer is None and git writes the tree.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping

from toolgate.checkpoints.git import ShadowGit, write_object

_TREE_MODE = b"40000"
Entry = tuple[str, str] | None  # (mode, blob), or None: no such file any more
_Listing = dict[bytes, tuple[bytes, bytes]]  # name → (mode, 20-byte id)


class _NotHere(Exception):
    """A tree this module cannot build in-process; git does it."""


def edited_tree(git: ShadowGit, base: str, entries: Mapping[bytes, Entry]) -> str | None:
    """The id of `base` with each path of `entries` set to its (mode, blob) or removed; None: ask git."""
    try:
        return _edit(git, base, entries, root=True)
    except _NotHere:
        return None


def _edit(git: ShadowGit, tree: str | None, entries: Mapping[bytes, Entry], *, root: bool = False) -> str | None:
    """The tree written, or None when it has no entries left (a directory with no files is no entry)."""
    listing = _read_tree(git, tree) if tree is not None else {}
    here: dict[bytes, Entry] = {}
    below: dict[bytes, dict[bytes, Entry]] = {}
    for path, entry in entries.items():
        name, slash, rest = path.partition(b"/")
        if slash:
            below.setdefault(name, {})[rest] = entry
        else:
            here[name] = entry
    for name, entry in here.items():
        if entry is None:
            listing.pop(name, None)
        else:
            listing[name] = (entry[0].encode(), bytes.fromhex(entry[1]))
    for name, inner in below.items():
        existing = listing.get(name)
        if name in here and here[name] is not None:
            raise _NotHere  # a file set where paths below it change too
        subtree = existing[1].hex() if existing is not None and existing[0] == _TREE_MODE else None
        if existing is not None and subtree is None:
            raise _NotHere  # a file in the way of a directory: git sorts that out
        made = _edit(git, subtree, inner)
        if made is None:
            listing.pop(name, None)
        else:
            listing[name] = (_TREE_MODE, bytes.fromhex(made))
    if not listing and not root:
        return None
    return write_object(git, "tree", _serialise(listing))


def _serialise(listing: _Listing) -> bytes:
    # git's order: names compared as bytes, a directory's as if it ended in "/".
    order = sorted(listing, key=lambda name: name + b"/" if listing[name][0] == _TREE_MODE else name)
    return b"".join(listing[name][0] + b" " + name + b"\0" + listing[name][1] for name in order)


def _read_tree(git: ShadowGit, tree: str) -> _Listing:
    try:
        raw = zlib.decompress((git.git_dir / "objects" / tree[:2] / tree[2:]).read_bytes())
    except (OSError, zlib.error):
        raise _NotHere from None  # packed (or gone): git reads it
    header, _, body = raw.partition(b"\0")
    if not header.startswith(b"tree "):
        raise _NotHere
    listing: _Listing = {}
    at = 0
    while at < len(body):
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        listing[body[space + 1 : nul]] = (body[at:space], body[nul + 1 : nul + 21])
        at = nul + 21
    return listing
