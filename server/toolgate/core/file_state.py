"""readFileState: what this session has read, so writes can demand a prior Read and detect staleness.

Bounded by entry count and by total content size (least recently used first out), because a session that
reads thousands of files must not grow without limit; an evicted file simply has to be Read again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from toolgate.core.paths import real_path
from toolgate.text.encoding import TextFormat

DEFAULT_MAX_ENTRIES = 100
DEFAULT_MAX_BYTES = 25 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One observation of a file. `content` is decoded text (BOM removed, line endings normalised to \\n).

    `full` is True when `content` is the whole file: only then can a changed timestamp be forgiven by
    comparing content. `offset`/`limit` are the Read arguments (None for a record made by a write).
    """

    content: str
    mtime_ns: int
    offset: int | None
    limit: int | None
    full: bool
    file_size: int | None = None  # bytes on disk when recorded; a cheap second witness beside the mtime
    unchanged_notice_given: bool = False  # Read answered "unchanged" for this record once already
    # Left by this session's own write, when decoding the bytes it wrote is certain to give `content` back in
    # `text_format` (`text.encoding.decoded_as_written`): the file's (device, inode, size, mtime, ctime) right
    # after the write. While a stat still shows exactly that, the file is the one written, and the next write
    # uses `content` instead of reading and decoding the file again (`tools._write.load_for_call`).
    identity: tuple[int, ...] | None = None
    text_format: TextFormat | None = None

    @property
    def size(self) -> int:
        if self.content.isascii():  # O(1) in CPython: the string knows; no 5 MB encode for the common case
            return len(self.content)
        return len(self.content.encode("utf-8", "surrogatepass"))


class StateKey(str):
    """A path as `state_key` resolved it. `get`, `set` and `forget` take it as it is, so a call that looks its
    file up and then records it resolves the path once. Keep one for the call that made it only: a symlink
    swapped before the next call must be resolved afresh."""

    __slots__ = ()


def state_key(path: Path | str) -> StateKey:
    """Every spelling of a path (`..`, symlinks) maps to one key, so aliases share one record."""
    return path if isinstance(path, StateKey) else StateKey(real_path(path))


class ReadFileState:
    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("readFileState bounds must be positive")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, FileRecord] = OrderedDict()
        self._sizes: dict[str, int] = {}  # each record's `size`, computed once (it encodes the whole content)
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str | Path) and state_key(path) in self._entries

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def get(self, path: Path | str) -> FileRecord | None:
        key = state_key(path)
        record = self._entries.get(key)
        if record is not None:
            self._entries.move_to_end(key)
        return record

    def set(self, path: Path | str, record: FileRecord) -> None:
        key = state_key(path)
        self._forget_key(key)
        size = record.size
        if size > self.max_bytes:
            # Too large to remember at all: the next write will ask for a fresh Read, which is safe.
            return
        self._entries[key] = record
        self._sizes[key] = size
        self._bytes += size
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            evicted, _ = self._entries.popitem(last=False)
            self._bytes -= self._sizes.pop(evicted)

    def forget(self, path: Path | str) -> None:
        self._forget_key(state_key(path))

    def _forget_key(self, key: str) -> None:
        if self._entries.pop(key, None) is not None:
            self._bytes -= self._sizes.pop(key)

    def paths(self) -> list[str]:
        return list(self._entries)

    def records(self) -> list[tuple[str, FileRecord]]:
        """Every (key, record), oldest first, without touching the recency order `get` keeps."""
        return list(self._entries.items())
