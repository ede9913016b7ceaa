"""The session's store for tool output too large to show inline.

A result over its tool's cap is saved here; the model gets a preview, the total size and a reference, and
reads the rest back with the ToolOutput / ToolOutputGrep tools. The store is bounded (oldest first out; a
reference to an evicted entry says it expired) and lives in the session directory, which goes with the
session.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from toolgate.core.deps import Dep, Resolver
from toolgate.core.errors import StateError

DEFAULT_MAX_ENTRIES = 200
DEFAULT_MAX_BYTES = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class StoredOutput:
    ref: str
    source: str  # what produced it, e.g. "Bash toolu_01…"
    path: Path
    size_bytes: int


class OutputStore:
    def __init__(
        self,
        directory: Path,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        owns_directory: bool = False,
    ) -> None:
        self.directory = directory
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._owns_directory = owns_directory
        self._entries: OrderedDict[str, StoredOutput] = OrderedDict()
        self._evicted: set[str] = set()
        self._bytes = 0

    def _new_ref(self) -> str:
        while True:
            ref = "out-" + secrets.token_hex(4)
            if ref not in self._entries and ref not in self._evicted:
                return ref

    def new_path(self) -> tuple[str, Path]:
        """A fresh reference and the file to write it to (for output that is streamed to disk as it comes)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        ref = self._new_ref()
        return ref, self.directory / f"{ref}.txt"

    def put(self, text: str, *, source: str) -> StoredOutput:
        ref, path = self.new_path()
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        return self.adopt(ref, path, source=source)

    def adopt(self, ref: str, path: Path, *, source: str) -> StoredOutput:
        """Register a file written at a path from `new_path` (its size is taken now)."""
        entry = StoredOutput(ref=ref, source=source, path=path, size_bytes=path.stat().st_size)
        self._entries[ref] = entry
        self._bytes += entry.size_bytes
        self._evict()
        return entry

    def _evict(self) -> None:
        while len(self._entries) > 1 and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            ref, old = self._entries.popitem(last=False)
            self._bytes -= old.size_bytes
            self._evicted.add(ref)
            old.path.unlink(missing_ok=True)

    def get(self, ref: str) -> StoredOutput:
        ref = ref.strip()
        entry = self._entries.get(ref)
        if entry is not None and entry.path.exists():
            return entry
        if ref in self._evicted:
            raise StateError(
                f"The stored output {ref} has expired: the store keeps only the most recent outputs. "
                "Run the command or search again to get a fresh reference."
            )
        known = ", ".join(list(self._entries)[-5:]) or "none"
        raise StateError(f"There is no stored output {ref!r} in this session (recent references: {known}).")

    def read_text(self, ref: str) -> str:
        return self.get(ref).path.read_text(encoding="utf-8", errors="replace")

    def refs(self) -> list[str]:
        return list(self._entries)

    def close(self) -> None:
        for entry in self._entries.values():
            entry.path.unlink(missing_ok=True)
        self._entries.clear()
        if self._owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                self.directory.rmdir()


def _default_store(_r: Resolver) -> OutputStore:
    directory = Path(tempfile.mkdtemp(prefix="toolgate-outputs-"))
    os.chmod(directory, 0o700)
    return OutputStore(directory, owns_directory=True)


# The sidecar and the agent loop override this with a store inside the session's own directory.
OUTPUT_STORE: Dep[OutputStore] = Dep("output_store", _default_store, close=lambda store: store.close())
