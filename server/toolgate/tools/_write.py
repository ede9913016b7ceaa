"""The write path every file-writing tool shares: load, check freshness, write atomically, record.

Rules (DESIGN §3):
- an existing file may only be written after a Read in this session, and only if it has not changed since:
  timestamp first (any difference, older too: a restored backup is a change), then content when the
  recorded read covered the whole file, so a touched-but-identical file is not an error;
- the final check runs in the same synchronous function as the write (`SingleFileWriter._write` in
  `_file_writer`, ApplyPatch's `_apply`; both call `atomic_write` here): no await between;
- a diff review's outcome is applied in one place, `final_text`: the plan, or the version the human accepted;
- the write is atomic and durable (`core.atomic_file`: temp file in the target's directory, fsync, rename,
  directory fsync), keeps the file's mode, goes through a symlink at the file's name to its target, and refuses if
  the file changed while the temp file was being written;
- the write goes where the permission decision saw the path lead, or nowhere: `load` refuses a path whose real
  path is no longer the one pinned for the call (`ToolContext.pinned`; a folder on the way swapped for a link),
  and `stage` reaches that real path's folder from `/` without following a link, then does everything through
  the folder's descriptor (temp file, freshness check, rename, fsync, sweep), so a swap after the check is not
  followed either;
- a temp file that a killed writer left behind is swept by the next write to the same target (`_temp_files`);
- a file this session wrote and nothing touched since (same device, inode, size, mtime and ctime) is not read
  back for the next Write or Edit: the record of the write holds its text and format (`load_for_call`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolgate.core.atomic_file import (
    FileBeneath,
    StagedBeneath,
    remove_file_beneath,
    stage_file_beneath,
    write_files_beneath,
)
from toolgate.core.beneath import NotAFolder, parent_beneath
from toolgate.core.context import ReviewedContent, ToolContext
from toolgate.core.deps import Dep
from toolgate.core.documents import OPEN_DOCUMENTS
from toolgate.core.errors import StateError
from toolgate.core.file_state import FileRecord
from toolgate.core.paths import display_path, real_path
from toolgate.text.encoding import Decoded, UndecodableError, UnencodableError, decode
from toolgate.text.review_outcome import describe_review
from toolgate.tools._pinned import require_pinned, swapped_folder_error
from toolgate.tools._temp_files import SUFFIX as TEMP_SUFFIX
from toolgate.tools._temp_files import sweep_abandoned, temp_prefix

MAX_EDIT_BYTES = 256 * 1024 * 1024
_BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class OnDisk:
    """A file as it is now. `stat` None: nothing exists at the path (it would be created). `data` is empty when
    the text came from the record of this session's own write (`load_for_call` with a record)."""

    path: Path  # as the model named it, absolute and normalised
    target: Path  # where the bytes live: symlinks followed
    stat: os.stat_result | None
    data: bytes = b""
    decoded: Decoded | None = None

    @property
    def exists(self) -> bool:
        return self.stat is not None

    @property
    def text(self) -> str:
        return self.decoded.text if self.decoded is not None else ""


def load(path: Path, shown: str, ctx: ToolContext | None = None) -> OnDisk:
    """Read a file that is about to be written. Anything that is not a decodable text file is a StateError.

    With `ctx`: the path must still lead where its permission decision saw it lead (`ToolContext.pinned`), or it
    is a StateError saying what changed on the way; `target` is then that pinned real path."""
    target = Path(_pinned_target(path, shown, ctx))
    try:
        st = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return OnDisk(path, target, None)
    except PermissionError:
        raise StateError(
            f"Permission denied: {shown} cannot be accessed by toolgate's user. Ask the user to change its "
            "permissions, or pick another file."
        ) from None
    except OSError as exc:  # a name too long for the filesystem, a symlink loop, an I/O error
        raise StateError(f"{shown} cannot be used as a file path: {exc.strerror or exc}.") from None
    if stat.S_ISDIR(st.st_mode):
        raise StateError(f"{shown} is a directory, not a file. Give the path of a file inside it.")
    if not stat.S_ISREG(st.st_mode):
        raise StateError(f"{shown} is not a regular file (a device, pipe or socket), so it cannot be written.")
    if st.st_size > MAX_EDIT_BYTES:
        raise StateError(
            f"{shown} is {st.st_size / 1024 / 1024:.0f} MiB, over the {MAX_EDIT_BYTES // 1024 // 1024} MiB limit "
            "for the file tools. Change it with a command that streams (for example sed via Bash) instead."
        )
    try:
        with open(target, "rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read()
    except PermissionError:
        raise StateError(
            f"Permission denied: toolgate's user may not read {shown}. Ask the user to change its permissions."
        ) from None
    head = data[:_BINARY_SNIFF_BYTES]
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise StateError(f"{shown} looks like a binary file (it contains NUL bytes); the text tools do not edit it.")
    try:
        decoded = decode(data)
    except UndecodableError as exc:
        raise StateError(f"{shown} cannot be decoded as text ({exc}), so it is not edited.") from None
    return OnDisk(path, target, st, data, decoded)


def _pinned_target(path: Path, shown: str, ctx: ToolContext | None) -> str:
    if ctx is None:
        return real_path(path)
    return require_pinned(path, ctx.pinned.get(path), shown, ctx.workspace, "written")


# What this call has loaded, by target. validate, propose and the final check before the write each load the file;
# reading and decoding 5 MB three times was most of a big Edit's cost. Call-scoped, so nothing outlives the call.
_LOADED_THIS_CALL: Dep[dict[Path, OnDisk]] = Dep("files_loaded_this_call", lambda _r: {}, scope="call")


def _identity(st: os.stat_result) -> tuple[int, ...]:
    # Any write, truncation, rename over or chmod changes one of these; the final check before the rename
    # (`require_unchanged`) compares the same kind of identity.
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def load_for_call(ctx: ToolContext, path: Path, shown: str, record: FileRecord | None = None) -> OnDisk:
    """`load`, reusing what this call loaded already when the file is provably the one read then (same
    device, inode, size, mtime and ctime). It is stat-ed anew every time, so the re-check right before a write
    still sees any change.

    With `record`: when it was left by this session's own write and the file provably is still the one written
    (`FileRecord.identity`), the record's text stands for the file, unread. `data` is then empty: a caller that
    passes a record uses only `text`, `decoded` and `stat`."""
    loaded = ctx.get(_LOADED_THIS_CALL)
    earlier = loaded.get(path)
    target = _pinned_target(path, shown, ctx)  # where the decision saw it, or a StateError
    if earlier is not None and earlier.stat is not None and target == str(earlier.target):
        try:
            same = _identity(os.stat(earlier.target)) == _identity(earlier.stat)
        except OSError:
            same = False
        if same:
            return earlier
    disk = _as_written(path, Path(target), record) or load(path, shown, ctx)
    loaded[path] = disk
    return disk


def _as_written(path: Path, target: Path, record: FileRecord | None) -> OnDisk | None:
    """The file as this session last wrote it, if the record knows that and nothing has touched the file since."""
    if record is None or not record.full or record.identity is None or record.text_format is None:
        return None
    if "\x00" in record.content[:_BINARY_SNIFF_BYTES]:
        return None  # `load` decides whether it is still text (its first bytes are at most this many characters)
    try:
        st = os.stat(target)
    except OSError:
        return None  # `load` says what is wrong
    if not stat.S_ISREG(st.st_mode) or _identity(st) != record.identity:
        return None
    return OnDisk(path, target, st, b"", Decoded(record.content, record.text_format))


def freshness(record: FileRecord | None, disk: OnDisk) -> Literal["fresh", "unread", "stale"]:
    """Timestamp, then content: only a real change since the recorded Read is stale."""
    if disk.stat is None:
        return "fresh"
    if record is None:
        return "unread"
    same_time = record.mtime_ns == disk.stat.st_mtime_ns
    same_size = record.file_size is None or record.file_size == disk.stat.st_size
    if same_time and same_size:
        return "fresh"
    if record.full and disk.text == record.content:
        return "fresh"  # touched (sync, formatter, antivirus) but not changed
    return "stale"


def require_fresh(record: FileRecord | None, disk: OnDisk, shown: str) -> None:
    state = freshness(record, disk)
    if state == "unread":
        raise StateError(
            f"{shown} has not been read in this session, so it cannot be changed safely. A Read from before the "
            "sidecar restarted (or before the session was reopened) does not count: the restarted sidecar keeps no "
            "record of what was read. Read it first (any part of it will do), then retry."
        )
    if state == "stale":
        raise StateError(
            f"{shown} has changed on disk since you last read it (the user, a formatter or another tool "
            "wrote it). Read it again to see its current content, then redo your change against that."
        )


def require_clean_in_editor(ctx: ToolContext, disk: OnDisk) -> None:
    documents = ctx.get(OPEN_DOCUMENTS)
    if any(documents.is_dirty(p) for p in {disk.path, disk.target}):
        shown = display_path(disk.path, ctx.workspace)
        raise StateError(
            f"{shown} has unsaved changes in the editor, and writing it now would clash with them. Ask the "
            "user to save or revert the file in the editor, then Read it again and retry."
        )


def written_record(text: str, st: os.stat_result, known: Decoded | None = None) -> FileRecord:
    """What a successful write leaves in readFileState: the whole new text, so a next edit needs no Read.

    `known`: what decoding the written bytes gives, when that is certain (`decoded_as_written`); its text must be
    `text`. Then the record also keeps the file's identity and format, so the next write skips reading it."""
    if known is not None and known.raw is None and known.text == text:  # the same object: O(1)
        identity: tuple[int, ...] | None = _identity(st)
        text_format = known.format
    else:
        identity, text_format = None, None
    return FileRecord(
        content=text,
        mtime_ns=st.st_mtime_ns,
        offset=None,
        limit=None,
        full=True,
        file_size=st.st_size,
        identity=identity,
        text_format=text_format,
    )


def encoding_error(shown: str, exc: UnencodableError) -> StateError:
    chars = ", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in exc.characters[:5])
    return StateError(
        f"{shown} is stored as {exc.encoding}, which cannot represent {chars}. Nothing was written. Use "
        f"characters {exc.encoding} can store (or an escape the file's language understands), or ask the user "
        "whether to convert the file to UTF-8."
    )


def reviewed_for(ctx: ToolContext, path: Path) -> ReviewedContent | None:
    """The human's final version of `path` from a diff review of this call, if there was one."""
    for item in ctx.reviewed or ():
        if Path(item.path) == path:
            return item
    return None


@dataclass(frozen=True, slots=True)
class FinalText:
    """What a call writes: its own plan, or the version a human accepted in the diff review."""

    text: str
    user_modified: bool = False
    user_changes: str = ""


def final_text(ctx: ToolContext, path: Path, planned: str, shown: str) -> FinalText:
    """The planned text, or the reviewed one. The plan is recomputed at write time: when it no longer equals
    what was reviewed, the file changed while the human looked, and the reviewed version must not land."""
    reviewed = reviewed_for(ctx, path)
    if reviewed is None:
        return FinalText(planned)
    if reviewed.proposed != planned:
        raise StateError(
            f"{shown} changed on disk while your change was being reviewed, so nothing was written. Read it "
            "again and redo the change."
        )
    if reviewed.skipped:
        raise StateError(f"The user chose to leave {shown} as it is, so nothing was written.")
    if reviewed.content is None:
        raise StateError(f"The review removed all of {shown}'s content instead of editing it; nothing was written.")
    final = reviewed.content.replace("\r\n", "\n")
    if final == planned:
        return FinalText(planned)
    return FinalText(final, True, describe_review(reviewed.original, planned, final, shown))


def review_note(described: str) -> str:
    """The tool result's note on a reviewed file (`describe_review`: which hunks, which edits of the person's)."""
    return f"\n{described}\nBuild on the file as it now is."


# --- the atomic write (core.atomic_file), with the freshness check between staging and replacing -----------


def _same_file_state(before: os.stat_result | None, now: os.stat_result | None) -> bool:
    if now is None or before is None:
        return now is None and before is None
    return (now.st_ino, now.st_size, now.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class Staged:
    """New bytes for `target`, safely on disk in a temp file beside it, not yet in place. It holds the target's
    folder open (`publish` or `discard` it): the check and the rename go through that folder, never by name."""

    file: StagedBeneath
    target: Path
    expected: os.stat_result | None
    shown: str


def stage(
    target: Path, data: bytes, expected: os.stat_result | None, shown: str, workspace: Path | None = None
) -> Staged:
    """Write `data` to a temp file in the target's folder (mode kept, fsynced). Nothing visible changes.

    `target` is a real path (`OnDisk.target`: where the permission decision saw the file, a link at its name
    followed). Its folder is reached from `/` one folder at a time without following a link (a missing one is
    made, as a new file's folders always were), so a folder swapped for a link since then refuses the write
    instead of carrying it elsewhere. `workspace`: to name such a folder as the model knows it."""
    if expected is not None and not expected.st_mode & 0o222:
        raise StateError(
            f"{shown} is read-only (mode {stat.filemode(expected.st_mode)}). Ask the user to make it writable "
            "if it should change."
        )
    try:
        staged = stage_file_beneath(
            b"/",
            os.fsencode(target).lstrip(b"/"),
            data,
            folders="create",
            temp_prefix=os.fsencode(temp_prefix(target)),
            temp_suffix=os.fsencode(TEMP_SUFFIX),
        )
    except NotAFolder as exc:
        if exc.is_link:
            raise swapped_folder_error("/" + exc.folder, shown, workspace, "written") from None
        raise StateError(f"{shown} cannot be created: a part of its directory path is a file.") from None
    except PermissionError:
        raise StateError(
            f"Permission denied: toolgate's user may not create files in {target.parent}. Ask the user to "
            "change the directory's permissions."
        ) from None
    except (FileExistsError, NotADirectoryError):
        raise StateError(f"{shown} cannot be created: a part of its directory path is a file.") from None
    except OSError as exc:
        raise StateError(f"{shown} could not be written: {exc.strerror or exc}. It was left as it was.") from None
    return Staged(staged, target, expected, shown)


def discard(staged: Staged) -> None:
    staged.file.discard()


def require_unchanged(target: Path, expected: os.stat_result | None, shown: str) -> None:
    """The target is still the file that was read (or still absent): the last check before it is replaced."""
    try:
        now: os.stat_result | None = os.stat(target, follow_symlinks=False)
    except FileNotFoundError:
        now = None
    _require_same(expected, now, shown)


def _require_same(expected: os.stat_result | None, now: os.stat_result | None, shown: str) -> None:
    if not _same_file_state(expected, now):
        raise StateError(
            f"{shown} changed on disk while it was being written (another program wrote it at the same "
            "moment), so it was left as that program wrote it. Read it again, then retry."
        )


def verify_unchanged(staged: Staged) -> None:
    """`require_unchanged`, looked at through the folder the new bytes are staged in (a link there counts as a
    change: the target is a real path, so a link at its name appeared since it was read)."""
    _require_same(staged.expected, staged.file.current(), staged.shown)


def publish(staged: Staged) -> os.stat_result:
    """Move the staged bytes into place: one rename, so readers see the old file or the new, never a mix."""
    folder = os.dup(staged.file.folder)  # the sweep lists the same folder the bytes went to, after the commit
    try:
        result = staged.file.commit()
        sweep_abandoned(staged.target, folder=folder)
    finally:
        os.close(folder)
    return result


def atomic_write(
    target: Path, data: bytes, expected: os.stat_result | None, shown: str, workspace: Path | None = None
) -> os.stat_result:
    """Replace `target` with `data` so that a reader (or a crash) sees the old file or the new, never a mix.

    `expected` is the target as it was when its content was read (None: it did not exist); if the target
    no longer matches it once the new bytes are on disk, nothing is replaced. `target`, `workspace`: as for
    `stage`.
    """
    staged = stage(target, data, expected, shown, workspace)
    try:
        verify_unchanged(staged)
        return publish(staged)
    except BaseException:
        discard(staged)
        raise


def put_back(disk: OnDisk) -> None:
    """Best effort, after a multi-file write failed part-way: the file as `disk` saw it (its bytes and mode, or no
    file when there was none), at its real path reached from `/` without following a link, as `stage` reaches it."""
    relative = os.fsencode(disk.target).lstrip(b"/")
    with contextlib.suppress(OSError):
        if disk.stat is None:
            remove_file_beneath(_ROOT, relative)
            return
        write_files_beneath(_ROOT, [FileBeneath(relative, disk.data)], folders="existing")
        folder, name = parent_beneath(_ROOT, relative)
        try:
            os.chmod(name, stat.S_IMODE(disk.stat.st_mode), dir_fd=folder)  # a deleted file comes back with its mode
        finally:
            os.close(folder)


_ROOT = Path("/")
