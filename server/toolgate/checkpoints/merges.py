"""One 3-way merge with `git merge-file`'s answer, at the least cost that gives exactly that answer.

The changes bar lists after every call and every turn, and each listing undoes every agent change of every file
the person has edited since (checkpoints.attribution): one merge each. Most of them are two edits apart, which
text.merge3 merges in-process with git's bytes; the rest are asked of git once and remembered by the digests of
their three inputs, so a file that stays as it is is not merged again, and a file that changes is (its digest,
and so the question, is new).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from toolgate.checkpoints.git import ShadowGit
from toolgate.checkpoints.models import CheckpointError
from toolgate.text.merge3 import merge_apart

MEMO_BYTES = 8 * 1024 * 1024  # the merged outputs remembered, newest first; a larger one is not remembered


@dataclass(frozen=True, slots=True)
class Merged:
    conflicts: int  # 0: `content` is the merge; else how many places conflict (`content` has their markers)
    content: bytes


class _Memo:
    """git's answers by question; thread-safe (listings run in worker threads)."""

    def __init__(self, max_bytes: int) -> None:
        self._answers: OrderedDict[bytes, Merged] = OrderedDict()
        self._max_bytes = max_bytes
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: bytes) -> Merged | None:
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self._answers.move_to_end(key)
            return found

    def put(self, key: bytes, answer: Merged) -> None:
        if len(answer.content) > self._max_bytes:
            return
        with self._lock:
            if key in self._answers:
                return
            self._answers[key] = answer
            self._bytes += len(answer.content)
            while self._bytes > self._max_bytes:
                _, dropped = self._answers.popitem(last=False)
                self._bytes -= len(dropped.content)


_MEMO = _Memo(MEMO_BYTES)


def merge_file(git: ShadowGit, *, base: bytes, ours: bytes, theirs: bytes, take_undo: bool = False) -> Merged:
    """`git merge-file -p [--theirs] ours base theirs`: its output and conflict count. Raises CheckpointError when
    git cannot merge them."""
    merged = merge_apart(base, ours, theirs)  # only ever a clean merge, so `--theirs` changes nothing of it
    if merged is not None:
        return Merged(0, merged)
    key = b"".join(
        [git.binary.encode(), b"\0theirs" if take_undo else b"\0"]
        + [hashlib.sha256(data).digest() for data in (base, ours, theirs)]
    )
    known = _MEMO.get(key)
    if known is not None:
        return known
    answer = _ask_git(git, base=base, ours=ours, theirs=theirs, take_undo=take_undo)
    _MEMO.put(key, answer)
    return answer


def _ask_git(git: ShadowGit, *, base: bytes, ours: bytes, theirs: bytes, take_undo: bool) -> Merged:
    with tempfile.TemporaryDirectory(prefix="toolgate-undo-") as scratch:
        names = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(scratch) / name).write_bytes(data)
            names.append(os.path.join(scratch, name))
        favour = ["--theirs"] if take_undo else []
        done = git.run(["merge-file", "-p", *favour, *names], check=False)
    # The number of conflicts, 127 at most; a negative status (255 as an exit code) or a signal is a failure.
    if not 0 <= done.returncode <= 127:
        raise CheckpointError(f"git merge-file failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return Merged(done.returncode, done.stdout)
