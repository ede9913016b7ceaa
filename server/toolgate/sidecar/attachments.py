"""What the person attached to a message (a file, a selection, a folder, the editor's problems), turned into the
text blocks the model reads beside the prompt, each naming its path and line range. The problems are listed by the
caller, which asks the editor (sidecar/attached_problems.py); here they only take their place among the blocks.

Where the text comes from: the file on disk, unless the editor holds unsaved changes to it, in which case the
live buffer the sidecar mirrors. The buffer is what the person is looking at and what their selection's line
numbers count in, so it is the honest answer to "this is what I mean"; the block then says the file on disk
differs. Only text that *is* the disk's content counts as read in readFileState: a clean whole file as a full
Read (an Edit may follow without reading it again), a clean part as a partial read. Buffer text is never
recorded: an Edit checks the disk, and a dirty file is refused for editing anyway.

The person chose these, so no permission is asked, but the gate still holds: a file or folder the rules deny
reading (`deny` rules, managed policy) is not attached (the block says why), and secrets are redacted from every
block as from every tool result. Sizes are capped like Read's, and every cap is announced.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolgate.core.child_env import own_secret_values
from toolgate.core.documents import OpenDocuments
from toolgate.core.file_state import FileRecord, ReadFileState
from toolgate.core.messages import TextBlock
from toolgate.core.paths import display_path
from toolgate.sidecar.protocol_composer import Attachment
from toolgate.text.encoding import UndecodableError, decode
from toolgate.text.lines import number_lines, split_lines
from toolgate.text.redact import redact

MAX_ATTACHED_FILE_BYTES = 256 * 1024  # Read's whole-file cap: beyond it only the first lines are attached
MAX_ATTACHED_LINES = 2000
MAX_READ_BYTES = 16 * 2**20  # a bigger file is not read into memory to attach its first lines
MAX_FOLDER_ENTRIES = 200


@dataclass(frozen=True, slots=True)
class _Text:
    lines: list[str]
    whole: str
    from_buffer: bool
    mtime_ns: int
    size: int


def attachment_blocks(
    attachments: Sequence[Attachment],
    *,
    workspace: Path,
    documents: OpenDocuments,
    file_state: ReadFileState,
    refused: Mapping[str, str] | None = None,
    problems: Mapping[str, str] | None = None,
) -> list[TextBlock]:
    """One text block per attachment, in the order attached; clean file text is recorded in `file_state`.
    `refused` maps an attachment's path to why the rules deny reading it: such a one is named, never shown.
    `problems` maps each problems attachment's path ('' for the workspace) to its text, as the caller listed it."""
    known = own_secret_values()
    blocks = []
    for attachment in attachments:
        why_not = (refused or {}).get(attachment.path or "")
        if why_not is not None and attachment.kind in ("file", "selection", "folder"):
            shown = display_path(_absolute(attachment.path or "", workspace), workspace)
            text = f"The person attached {shown}, but it is not shown: the rules deny reading it ({why_not})."
        elif attachment.kind == "problems":
            text = (problems or {})[attachment.path or ""]
        elif attachment.kind == "folder":
            text = _folder_text(Path(attachment.path or ""), workspace)
        else:
            text = _file_text(attachment, workspace, documents, file_state)
        done = redact(text, known)
        note = done.note(f"the attachment {attachment.path or attachment.kind}")
        blocks.append(TextBlock(text=done.text if note is None else f"{done.text}\n\n{note}"))
    return blocks


def attachment_path(attachment: Attachment, workspace: Path) -> Path | None:
    """The file or folder an attachment reads (what the rules are asked about); None when it names none. A problems
    attachment is not asked about here: its caller lists it under the Problems tool's own check."""
    return _absolute(attachment.path, workspace) if attachment.path else None


def _file_text(attachment: Attachment, workspace: Path, documents: OpenDocuments, file_state: ReadFileState) -> str:
    path = _absolute(attachment.path or "", workspace)
    shown = display_path(path, workspace)
    label = f" ({attachment.label})" if attachment.label else ""
    try:
        source = _read(path, documents)
    except OSError as exc:
        return f"The person attached {shown}{label}, but it could not be read: {exc.strerror or exc}."
    except ValueError as exc:
        return f"The person attached {shown}{label}, but it is not shown: {exc}"
    total = len(source.lines)
    if total == 0:
        return f"The person attached {shown}{label}: the file is empty."
    first = min(attachment.start_line or 1, total)
    last = min(attachment.end_line or total, total)
    capped = _capped_end(source.lines, first, last)
    selected = source.lines[first - 1 : capped]
    full = first == 1 and capped == total
    what = "the whole file" if full else f"lines {first}-{capped} of {total}"
    notes = []
    if capped < last:
        notes.append(
            f"Only lines {first}-{capped} are attached (at most {MAX_ATTACHED_LINES} lines and "
            f"{MAX_ATTACHED_FILE_BYTES // 1024} KB); Read the file with offset={capped + 1} for the rest."
        )
    if source.from_buffer:
        notes.append("This is the editor's unsaved text; the file on disk differs. Do not edit it until it is saved.")
    else:
        content = source.whole if full else "\n".join(selected)
        offset, limit = (1, None) if full else (first, capped - first + 1)
        file_state.set(path, FileRecord(content, source.mtime_ns, offset, limit, full, source.size))
    header = f"The person attached {shown}{label}, {what}:"
    return "\n".join([header, *notes, number_lines(selected, first)])


def _read(path: Path, documents: OpenDocuments) -> _Text:
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise ValueError("it is a directory (attach it as a folder for its listing).")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("it is not a regular file.")
    buffer = documents.text(path) if documents.is_dirty(path) else None
    if buffer is not None:
        whole = buffer.replace("\r\n", "\n")
        return _Text(split_lines(whole), whole, True, st.st_mtime_ns, st.st_size)
    if st.st_size > MAX_READ_BYTES:
        raise ValueError(
            f"it is over {MAX_READ_BYTES // 2**20} MB; ask for the part you mean (Read with offset/limit)."
        )
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())  # before reading: a change while reading leaves a newer mtime than recorded
        data = handle.read()
    if b"\0" in data[:8192]:
        raise ValueError("it looks like a binary file (it contains NUL bytes).")
    try:
        whole = decode(data).text
    except UndecodableError as exc:
        raise ValueError(f"it cannot be decoded as text ({exc}).") from None
    return _Text(split_lines(whole), whole, False, st.st_mtime_ns, st.st_size)


def _capped_end(lines: list[str], first: int, last: int) -> int:
    """The last line to attach: `last`, or earlier where the line or byte cap is reached."""
    budget = MAX_ATTACHED_FILE_BYTES
    end = first - 1
    while end < last and end - first + 1 < MAX_ATTACHED_LINES:
        budget -= len(lines[end].encode("utf-8", "surrogatepass")) + 1
        if budget < 0 and end >= first:
            break
        end += 1
    return max(end, first)


def _folder_text(path: Path, workspace: Path) -> str:
    path = _absolute(str(path), workspace)
    shown = display_path(path, workspace)
    try:
        entries = sorted(os.scandir(path), key=lambda entry: entry.name)
    except OSError as exc:
        return f"The person attached the folder {shown}, but it could not be listed: {exc.strerror or exc}."
    names = [entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "") for entry in entries]
    names = [name for name in names if name != ".git/"]
    if not names:
        return f"The person attached the folder {shown}: it is empty."
    shown_names = names[:MAX_FOLDER_ENTRIES]
    cap = (
        f" (showing {MAX_FOLDER_ENTRIES} of {len(names)} entries: use Glob for the rest)"
        if len(names) > MAX_FOLDER_ENTRIES
        else ""
    )
    return f"The person attached the folder {shown}; its entries{cap}:\n" + "\n".join(shown_names)


def _absolute(path: str, workspace: Path) -> Path:
    return Path(os.path.normpath(os.path.join(workspace, os.path.expanduser(path))))
