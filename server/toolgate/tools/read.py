"""Read: a text file with `N<TAB>line` numbering, within a byte cap and a token cap, recorded in readFileState.

Images come back as image blocks, PDFs as the text of their pages (a page without text as an image),
notebooks cell by cell with their outputs (see `_read_media`); binary formats are refused by name and by a
NUL-byte sniff.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import anyio
from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.errors import StateError
from toolgate.core.file_state import FileRecord, StateKey, state_key
from toolgate.core.messages import ContentBlock
from toolgate.core.paths import display_input_path, display_path
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Tool, ToolInput
from toolgate.text.encoding import UndecodableError, decode
from toolgate.text.lines import number_lines, split_lines
from toolgate.text.sizes import format_bytes
from toolgate.text.tokens import estimate_tokens
from toolgate.tools._files import stat_regular_file
from toolgate.tools._pinned import OpenedCheck
from toolgate.tools._read_media import (
    IMAGE_SUFFIXES,
    MAX_MEDIA_FILE_BYTES,
    MAX_PDF_PAGES_PER_READ,
    MAX_PDF_PAGES_WITHOUT_RANGE,
    binary_refusal,
    parse_pages,
    read_image,
    read_pdf,
    render_notebook,
)
from toolgate.tools._temp_files import sweep_on_first_read

MAX_WHOLE_FILE_BYTES = 256 * 1024
MAX_TOKENS = 25_000
BINARY_SNIFF_BYTES = 8192
STREAM_THRESHOLD_BYTES = 32 * 1024 * 1024
_INLINE_READ_BYTES = 64 * 1024  # files up to this size are read without a thread hand-off


class ReadInput(ToolInput):
    file_path: str = Field(description="Path of the file to read: absolute, or relative to the workspace.")
    offset: int | None = Field(
        default=None,
        ge=0,
        description="1-based line number to start at (0 counts as 1). Omit to start at line 1.",
    )
    limit: int | None = Field(default=None, ge=1, description="How many lines to read. Omit to read to the end.")
    pages: str | None = Field(
        default=None,
        description=f'PDFs only: the pages to read, like "3", "1-5" or "10-" (at most {MAX_PDF_PAGES_PER_READ}).',
    )


@dataclass(frozen=True, slots=True)
class ReadMedia:
    """An image, a PDF's text or a rendered notebook: content ready for the model."""

    content: str | list[ContentBlock]


@dataclass(frozen=True, slots=True)
class ReadText:
    shown: str  # the path as the model should see it
    kind: Literal["text", "empty", "past_end", "unchanged"]
    first_line: int
    lines: Sequence[str]
    total_lines: int
    numbered: str | None = None  # `lines` as `N<TAB>line`, when the read already made them so


class ReadTool(Tool[ReadInput, ReadText | ReadMedia]):
    name = "Read"
    traits = LOOKS_ONLY
    input_model = ReadInput
    max_result_chars = None  # Read enforces its own caps and refuses instead of truncating

    def description(self, ctx: DescribeContext) -> str:
        search = " Use Grep to find where something is before reading around it." if "Grep" in ctx.tool_names else ""
        return (
            "Read a text file. Lines come back numbered as `N<TAB>text`, starting at 1; the number and tab are "
            "not part of the file (leave them out of any Edit).\n"
            f"- Whole-file reads are limited to {MAX_WHOLE_FILE_BYTES // 1024} KiB and every read to about "
            f"{MAX_TOKENS:,} tokens; over a limit, the call fails and says so: read a range with offset and limit."
            f"{search}\n"
            "- Images (png, jpeg, gif, webp) are shown as images; PDFs as the text of their pages, a page without "
            f"text (a scan) as an image (use pages for a PDF over {MAX_PDF_PAGES_WITHOUT_RANGE} pages); notebooks "
            "cell by cell with outputs (offset/limit read a notebook's raw JSON instead). Other binary files are "
            "refused.\n"
            "- Relative paths resolve against the workspace; `~` is your home directory.\n"
            "- Read a file before you edit or overwrite it; the edit tools refuse files you have not read.\n"
            "- Several independent reads in one turn run in parallel."
        )

    def paths(self, tool_input: ReadInput, ctx: ToolContext) -> Sequence[Path]:
        return [ctx.resolve_path(tool_input.file_path)]

    def summary(self, tool_input: ReadInput, workspace: Path) -> str:
        rng = ""
        if tool_input.offset or tool_input.limit:
            start = max(tool_input.offset or 1, 1)
            rng = f" (lines {start}–{start + tool_input.limit - 1})" if tool_input.limit else f" (from line {start})"
        return f"{display_input_path(tool_input.file_path, workspace)}{rng}"

    async def validate(self, tool_input: ReadInput, ctx: ToolContext) -> None:
        path = ctx.resolve_path(tool_input.file_path)
        st = stat_regular_file(path, ctx)
        shown = display_path(path, ctx.workspace)
        refusal = binary_refusal(path, shown)
        if refusal is not None:
            raise StateError(refusal)
        kind = _kind(path, tool_input)
        if tool_input.pages is not None:
            if kind != "pdf":
                raise StateError("pages applies only to PDF files; for a text file use offset and limit.")
            parse_pages(tool_input.pages)
        whole = tool_input.offset is None and tool_input.limit is None
        if kind != "text" and st.st_size > MAX_MEDIA_FILE_BYTES:
            raise StateError(f"{shown} is {format_bytes(st.st_size)}, too large for Read to open.")
        if kind == "text" and whole and st.st_size > MAX_WHOLE_FILE_BYTES:
            raise StateError(
                f"{display_path(path, ctx.workspace)} is {format_bytes(st.st_size)}, over the "
                f"{MAX_WHOLE_FILE_BYTES // 1024} KiB limit for reading a whole file. Read part of it with "
                "offset and limit (for example offset=1, limit=500), or use Grep to find the lines you need."
            )

    async def call(self, tool_input: ReadInput, ctx: ToolContext) -> ReadText | ReadMedia:
        path = ctx.resolve_path(tool_input.file_path)
        shown = display_path(path, ctx.workspace)
        first = max(tool_input.offset or 1, 1)
        limit = tool_input.limit
        kind = _kind(path, tool_input)
        sweep_on_first_read(ctx, path)
        # Whatever is opened below must be the file the permission decision saw (`ToolContext.pinned`).
        check = OpenedCheck(path, ctx.pinned.get(path), shown, ctx.workspace)
        # Images and PDFs are not recorded in readFileState (they are never edited as text), so they are
        # always sent: there is no "unchanged" shortcut for them.
        if kind == "image":
            return ReadMedia(await anyio.to_thread.run_sync(read_image, path, shown, check))
        if kind == "pdf":
            return ReadMedia(await anyio.to_thread.run_sync(read_pdf, path, shown, tool_input.pages, MAX_TOKENS, check))

        # A small file is read now (one open, one fstat): its fstat serves the "unchanged" check below and the
        # record this read leaves, where a separate stat before the read cost a system call on every Read.
        small = _read_small_file(path, check)
        current = small[1] if small is not None else os.stat(path)
        # Resolved once for the lookup and the record this call leaves. The file read was seen to be the pinned
        # one (its descriptor's /proc entry named the pin): that is its real path, with no second resolution.
        key = StateKey(check.pinned) if small is not None and check.confirmed and check.pinned else state_key(path)
        previous = ctx.file_state.get(key)
        if (
            previous is not None
            and previous.offset == first
            and previous.limit == limit
            and previous.mtime_ns == current.st_mtime_ns
            and previous.file_size == current.st_size
            and not previous.unchanged_notice_given
        ):
            # Same range, same file: say so instead of sending it again. Only once in a row, though: a model
            # that reads it yet again evidently no longer has it, and gets the text.
            ctx.commit(lambda s: s.file_state.set(key, replace(previous, unchanged_notice_given=True)))
            return ReadText(shown, "unchanged", first, (), 0)

        if kind == "text" and current.st_size > STREAM_THRESHOLD_BYTES:
            # A ranged read of a huge file (a log, a dump): never hold the whole file in memory.
            selected, total, st = await anyio.to_thread.run_sync(_read_range_streaming, path, first, limit, check)
            text = "\n".join(selected)
        else:
            data, st = small if small is not None else await anyio.to_thread.run_sync(_read_bytes, path, check)
            if _looks_binary(data):
                raise StateError(
                    f"{shown} looks like a binary file (it contains NUL bytes), so it is not shown as text."
                )
            try:
                text = decode(data).text
            except UndecodableError as exc:
                raise StateError(f"{shown} cannot be decoded as text: {exc}.") from None
            if kind == "notebook":
                rendered_nb = await anyio.to_thread.run_sync(render_notebook, text, shown, MAX_TOKENS)
                record = FileRecord(text, st.st_mtime_ns, first, limit, True, st.st_size)
                ctx.commit(lambda s: s.file_state.set(key, record))
                return ReadMedia(rendered_nb)
            all_lines = split_lines(text)
            total = len(all_lines)
            selected = all_lines[first - 1 : first - 1 + limit if limit else None]
        full = first == 1 and (limit is None or limit >= total)
        record = FileRecord(
            content=text if full else "\n".join(selected),
            mtime_ns=st.st_mtime_ns,
            offset=first,
            limit=limit,
            full=full,
            file_size=st.st_size,
        )
        ctx.commit(lambda s: s.file_state.set(key, record))

        if total == 0:
            return ReadText(shown, "empty", first, (), 0)
        if first > total:
            return ReadText(shown, "past_end", first, (), total)

        rendered = number_lines(selected, first)  # kept in the ReadText: `to_result` need not number them again
        tokens = estimate_tokens(rendered, path.name)
        if tokens > MAX_TOKENS:
            fit = max(1, int(len(selected) * MAX_TOKENS / tokens * 0.9))
            raise StateError(
                f"Lines {first}–{first + len(selected) - 1} of {shown} come to about {tokens:,} tokens, over the "
                f"{MAX_TOKENS:,}-token limit for one read. Read fewer lines (about limit={fit} fits), "
                "or use Grep to find the part you need."
            )
        return ReadText(shown, "text", first, selected, total, rendered)

    def to_result(self, data: ReadText | ReadMedia, ctx: ToolContext) -> str | list[ContentBlock]:
        if isinstance(data, ReadMedia):
            return data.content
        if data.kind == "empty":
            return f"(The file {data.shown} exists but is empty.)"
        if data.kind == "past_end":
            return (
                f"(The file {data.shown} has {data.total_lines} lines, so there is nothing at line "
                f"{data.first_line}. Use an offset between 1 and {data.total_lines}.)"
            )
        if data.kind == "unchanged":
            return (
                f"(The file {data.shown} has not changed since you last read this same range; that earlier "
                "result is still current. Reading the same range once more returns the full text.)"
            )
        return data.numbered if data.numbered is not None else number_lines(data.lines, data.first_line)


def _kind(path: Path, tool_input: ReadInput) -> Literal["text", "image", "pdf", "notebook"]:
    suffix = path.suffix.lower()
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix == ".pdf":
        return "pdf"
    if suffix == ".ipynb" and tool_input.offset is None and tool_input.limit is None:
        return "notebook"  # with offset/limit, a notebook is read as its raw JSON text
    return "text"


def _looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:BINARY_SNIFF_BYTES] and not head.startswith((b"\xff\xfe", b"\xfe\xff"))


def _read_range_streaming(
    path: Path, first: int, limit: int | None, check: OpenedCheck | None = None
) -> tuple[list[str], int, os.stat_result]:
    with open(path, "rb") as handle:
        if check is not None:
            check(handle.fileno())
        st = os.fstat(handle.fileno())
        head = handle.read(BINARY_SNIFF_BYTES)
        if _looks_binary(head):
            raise StateError(f"{path} looks like a binary file (it contains NUL bytes), so it is not shown as text.")
        handle.seek(0)
        if head.startswith(codecs.BOM_UTF8):
            encoding = "utf-8-sig"
        elif head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            encoding = "utf-16"  # the codec reads the BOM and drops it
        else:
            encoding = "utf-8"  # invalid bytes are shown as U+FFFD; a ranged view, never written back
        selected: list[str] = []
        total = 0
        stream = io.TextIOWrapper(handle, encoding=encoding, errors="replace", newline="")
        for total, line in enumerate(_iter_lf_lines(stream), start=1):
            if total >= first and (limit is None or len(selected) < limit):
                selected.append(line)
        return selected, total, st


def _iter_lf_lines(stream: io.TextIOWrapper) -> Iterator[str]:
    """Lines split on LF only (the same rule as `split_lines`), streamed."""
    pending = ""
    for chunk in iter(lambda: stream.read(1 << 20), ""):
        pending += chunk
        *complete, pending = pending.split("\n")
        for line in complete:
            yield line[:-1] if line.endswith("\r") else line
    if pending:
        yield pending[:-1] if pending.endswith("\r") else pending


def _read_small_file(path: Path, check: OpenedCheck | None = None) -> tuple[bytes, os.stat_result] | None:
    """The bytes of a regular file of at most `_INLINE_READ_BYTES`, read on the calling thread: handing a read
    that small to a worker thread costs more than the read. None for anything else (read on a worker instead).
    O_NONBLOCK: if a FIFO took the file's place since it was checked, opening it must not wait for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None  # the worker's open() raises the error the caller explains
    try:
        if check is not None:
            check(fd)
        st = os.fstat(fd)  # before reading, as in _read_bytes
        if not stat.S_ISREG(st.st_mode) or st.st_size > _INLINE_READ_BYTES:
            return None
        chunks = []
        while chunk := os.read(fd, _INLINE_READ_BYTES + 1):  # past the size only if the file is growing
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def _read_bytes(path: Path, check: OpenedCheck | None = None) -> tuple[bytes, os.stat_result]:
    # fstat before reading: if the file changes while we read, its mtime will be newer than the one we
    # record, so a later write notices and compares content.
    with open(path, "rb") as handle:
        if check is not None:
            check(handle.fileno())
        st = os.fstat(handle.fileno())
        return handle.read(), st
