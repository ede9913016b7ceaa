"""The conversation side of a checkpoint: where the session's transcript stood, and cutting it back there.

A transcript (`transcript.jsonl`) is only ever appended to, so "the conversation at a checkpoint" is a prefix of
the file: its length and the hash of those bytes (ConversationMark). After a cut, new entries are appended to
the shorter file, and an older checkpoint's prefix may no longer be in it; that is why the redo checkpoint of
every cut keeps the whole transcript as it was (a blob in the store), and a mark is looked up in the current
transcript and in those kept ones alike.

The module reads and writes one file and knows nothing of what an entry means, beyond counting lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from toolgate.checkpoints.models import ConversationMark
from toolgate.core.atomic_file import write_file_atomically


def read_transcript(path: Path) -> bytes:
    """The transcript's bytes; a session that has said nothing yet has an empty one."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def mark_of(data: bytes, blob: str | None = None) -> ConversationMark:
    # Only whole lines count: a line cut short by a crash is not part of any conversation.
    size = data.rfind(b"\n") + 1
    return ConversationMark(size=size, sha256=hashlib.sha256(data[:size]).hexdigest(), blob=blob)


def find_conversation(mark: ConversationMark, candidates: Iterable[bytes]) -> bytes | None:
    """The transcript `mark` describes, from the first candidate that starts with it; None if none does."""
    for data in candidates:
        if len(data) >= mark.size and hashlib.sha256(data[: mark.size]).hexdigest() == mark.sha256:
            return data[: mark.size]
    return None


def entries_between(shorter: bytes, longer: bytes) -> int:
    """How many transcript entries (lines) `longer` has that `shorter` has not (when it is a prefix; else all
    of `longer`'s, since the conversation is replaced as a whole)."""
    tail = longer[len(shorter) :] if longer.startswith(shorter) else longer
    return sum(1 for line in tail.split(b"\n") if line.strip())


def replace_transcript(path: Path, data: bytes) -> None:
    """Put `data` in place of the transcript in one step (a crash leaves the old one or the new one). Whoever
    appends to the transcript must reopen it afterwards: an open descriptor still points at the old file."""
    write_file_atomically(path, data, new_file_mode=0o600)
