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
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic import TypeAdapter

from toolgate.core.deps import Dep, Resolver
from toolgate.core.errors import StateError
from toolgate.core.messages import ContentBlock, ImageBlock, TextBlock, ToolResultContent
from toolgate.text.preview import Preview, head_and_tail

DEFAULT_MAX_ENTRIES = 200
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
# How much of a stored result the model sees inline.
PREVIEW_HEAD_CHARS = 2_000
PREVIEW_TAIL_CHARS = 1_000

_BLOCKS: TypeAdapter[list[ContentBlock]] = TypeAdapter(list[ContentBlock])


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
        persistent: bool = False,
    ) -> None:
        """`persistent`: the directory belongs to a stored session that can be resumed, so outputs of earlier
        runs are found again and closing keeps them (deleting the session removes them). Otherwise closing
        removes every output (and the directory, when `owns_directory`)."""
        self.directory = directory
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._owns_directory = owns_directory
        self._persistent = persistent
        self._entries: OrderedDict[str, StoredOutput] = OrderedDict()
        self._evicted: set[str] = set()
        # References handed out by `new_path` whose file is still being written (not yet adopted).
        self._pending: dict[str, Path] = {}
        self._bytes = 0
        if persistent:
            self._adopt_earlier_outputs()

    def _adopt_earlier_outputs(self) -> None:
        try:
            found = [(entry.stat().st_mtime_ns, entry) for entry in self.directory.glob("out-*.txt")]
        except OSError:
            return
        for _, path in sorted(found):
            self.adopt(path.stem, path, source="an earlier run of this session")

    def _new_ref(self) -> str:
        while True:
            ref = "out-" + secrets.token_hex(4)
            if ref not in self._entries and ref not in self._evicted and ref not in self._pending:
                return ref

    def new_path(self) -> tuple[str, Path]:
        """A fresh reference and the file to write it to (for output that is streamed to disk as it comes).

        The reference is reserved until `adopt` registers the file, so concurrent writers never collide.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        ref = self._new_ref()
        path = self.directory / f"{ref}.txt"
        self._pending[ref] = path
        return ref, path

    def put(self, text: str, *, source: str) -> StoredOutput:
        ref, path = self.new_path()
        # Bytes, not write_text: no newline translation, so the stored text reads back exactly.
        path.write_bytes(encode_text(text))
        return self.adopt(ref, path, source=source)

    def put_result(self, content: ToolResultContent, *, source: str) -> StoredOutput:
        """A whole tool result. Its text is what ToolOutput pages and ToolOutputGrep searches (an image shows
        as a line naming it); a result with images also keeps its blocks as they were (`blocks`)."""
        if isinstance(content, str):
            return self.put(content, source=source)
        ref, path = self.new_path()
        path.write_bytes(encode_text(_as_text(content)))
        if any(isinstance(block, ImageBlock) for block in content):
            _blocks_path(path).write_bytes(_BLOCKS.dump_json(content))
        return self.adopt(ref, path, source=source)

    def blocks(self, ref: str) -> list[ContentBlock]:
        """The stored result's blocks, images included (a text-only result is one text block)."""
        entry = self.get(ref)
        structured = _blocks_path(entry.path)
        if structured.exists():
            return _BLOCKS.validate_json(structured.read_bytes())
        return [TextBlock(text=self.read_text(ref))]

    def adopt(self, ref: str, path: Path, *, source: str) -> StoredOutput:
        """Register a file written at a path from `new_path` (its size is taken now)."""
        self._pending.pop(ref, None)
        entry = StoredOutput(ref=ref, source=source, path=path, size_bytes=path.stat().st_size)
        self._entries[ref] = entry
        self._bytes += entry.size_bytes
        self._evict()
        return entry

    def discard(self, ref: str) -> None:
        """Give up a reference from `new_path` that will never be adopted (its writer failed)."""
        path = self._pending.pop(ref, None)
        if path is not None:
            path.unlink(missing_ok=True)

    def _evict(self) -> None:
        while len(self._entries) > 1 and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            ref, old = self._entries.popitem(last=False)
            self._bytes -= old.size_bytes
            self._evicted.add(ref)
            _unlink(old.path)

    def get(self, ref: str) -> StoredOutput:
        ref = ref.strip()
        entry = self._entries.get(ref)
        if entry is not None and entry.path.exists():
            return entry
        if entry is not None or ref in self._evicted:
            raise StateError(
                f"The stored output {ref} has expired: the store keeps only the most recent outputs. "
                "Run the command or search again to get a fresh reference."
            )
        known = ", ".join(list(self._entries)[-5:]) or "none"
        raise StateError(
            f"There is no stored output {ref!r} in this session (recent references: {known}). Stored outputs "
            "end with the session that made them: run the command or search again to get a fresh reference."
        )

    def read_text(self, ref: str) -> str:
        """The stored text exactly as it was put (bytes that are not UTF-8 show as U+FFFD)."""
        return self.get(ref).path.read_bytes().decode("utf-8", errors="replace")

    def refs(self) -> list[str]:
        return list(self._entries)

    def close(self) -> None:
        for path in self._pending.values():
            _unlink(path)  # half-written: never readable as a whole
        self._pending.clear()
        if not self._persistent:
            for entry in self._entries.values():
                _unlink(entry.path)
        self._entries.clear()
        if self._persistent:
            return
        if self._owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                self.directory.rmdir()


def _blocks_path(path: Path) -> Path:
    return path.with_suffix(".blocks.json")


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)
    _blocks_path(path).unlink(missing_ok=True)


def _as_text(blocks: list[ContentBlock]) -> str:
    return "\n".join(
        block.text if isinstance(block, TextBlock) else f"[image {block.source.media_type}, kept with its result]"
        for block in blocks
    )


def encode_text(text: str) -> bytes:
    # surrogatepass: a lone surrogate (say, from bytes decoded with surrogateescape) is written, not refused.
    return text.encode("utf-8", errors="surrogatepass")


def _default_store(_r: Resolver) -> OutputStore:
    directory = Path(tempfile.mkdtemp(prefix="toolgate-outputs-"))
    os.chmod(directory, 0o700)
    return OutputStore(directory, owns_directory=True)


# The sidecar and the agent loop override this with a store inside the session's own directory.
OUTPUT_STORE: Dep[OutputStore] = Dep("output_store", _default_store, close=lambda store: store.close())


# --- the runner's hook: results over a tool's cap ---------------------------------------------------------


def _text_of(content: ToolResultContent) -> str | None:
    """The result as one text, or None when it holds an image (those are never stored)."""
    if isinstance(content, str):
        return content
    if any(isinstance(block, ImageBlock) for block in content):
        return None
    return "\n".join(block.text for block in content if not isinstance(block, ImageBlock))


async def spill_oversized(
    content: ToolResultContent,
    *,
    limit: int,
    store: Callable[[], OutputStore],
    source: str,
    readers: Collection[str],
) -> ToolResultContent:
    """`content` itself when it fits in `limit` characters; otherwise store it and return a preview.

    The preview holds the start and the end (the end is where tools put their summaries and notices), the
    total size, the reference, and how to read the rest with the reader tools present (`readers`). `store`
    is called only when something must be stored, so a session that never needs the store never makes one.
    """
    text = _text_of(content)
    if text is None or len(text) <= limit:
        return content
    preview = head_and_tail(text, PREVIEW_HEAD_CHARS, PREVIEW_TAIL_CHARS)
    size = f"{preview.total_chars:,} characters, {preview.total_lines:,} lines"
    ref = ""
    try:
        outputs = store()
        ref, path = outputs.new_path()
        await anyio.to_thread.run_sync(path.write_bytes, encode_text(text))
        outputs.adopt(ref, path, source=source)
    except OSError as exc:
        if ref:
            with contextlib.suppress(OSError):
                outputs.discard(ref)
        header = (
            f"[This result is too long to show in full ({size}), and it could not be stored for reading back "
            f"({exc.strerror or exc}). Only its start and end are shown: narrow the call to get a smaller result.]"
        )
        return _render_preview(header, preview, "")
    header = (
        f"[This result is too long to show in full ({size}), so the whole text is stored as {ref}. "
        "Its start and end follow.]"
    )
    return _render_preview(header, preview, _how_to_read(ref, readers))


def _how_to_read(ref: str, readers: Collection[str]) -> str:
    ways = []
    if "ToolOutput" in readers:
        ways.append(f'read any range of lines with ToolOutput(ref="{ref}", offset=<first line>, limit=<count>)')
    if "ToolOutputGrep" in readers:
        ways.append(f'find lines with ToolOutputGrep(ref="{ref}", pattern=<regex>)')
    if not ways:
        return "[No tool that reads stored results is available here: narrow the call to get a smaller result.]"
    return "[To see the rest, " + ", or ".join(ways) + ".]"


def _render_preview(header: str, preview: Preview, footer: str) -> str:
    parts = [header, preview.head]
    if preview.omitted_chars:
        first = preview.head_last_line + (0 if preview.head_ends_mid_line else 1)
        last = preview.tail_first_line - (0 if preview.tail_starts_mid_line else 1)
        where = f"line {first:,}" if first >= last else f"lines {first:,}–{last:,}"
        parts.append(f"[… {preview.omitted_chars:,} characters not shown ({where}) …]")
    if preview.tail:
        parts.append(preview.tail)
    if footer:
        parts.append(footer)
    return "\n".join(parts)
