"""The one way toolgate replaces a file on disk: atomically and durably.

Every writer of a file a human or a later run relies on (the file tools, settings files, session metadata, and
checkpoint restore) goes through `write_file_atomically`, or through `stage_file` + `StagedFile.commit` when it must
check something between "the new bytes are safely on disk" and "they replace the old file", or, for many files at
once (a restore), through `write_files_atomically`, which gives each file the same guarantees. A writer that must
stay beneath a folder it does not trust (an undo or a restore in the workspace, where the agent may have swapped a
folder for a link) uses `write_files_beneath` and `remove_file_beneath`: the same guarantees, no link followed;
`stage_file_beneath` + `StagedBeneath.commit` is its one-file form with a check between (the file tools, which
write to the real path their permission decision saw, walked from `/`).

Guarantees:
- a reader, or a crash at any moment, sees the old file or the new one, never a mix or a truncation: the bytes go
  to a temp file in the target's own directory (same filesystem, so the rename is atomic), which is fsynced,
  renamed over the target, and then the directory is fsynced so the rename itself survives a power loss;
- a symlink is written through: the file it points at is replaced and the link stays a link (beneath a root, it
  is replaced by the file instead, and a folder on the way is never a link);
- an existing file keeps its permission bits and (where the process may set them) its owner and group; a new
  file gets `new_file_mode` (default: 0o666 minus the umask, as `open()` would create it);
- on any failure the original file is untouched and the temp file is removed.

Replacing a big file frees its old blocks, which the filesystem does inside the rename (milliseconds for a few
MB). The old file is held open across the rename, so the freeing happens when that descriptor is closed, on a
thread of its own, after the caller has its answer (`_release_later`). A batch does so for every file it
replaces: on a busy disk freeing even a small one waits on the journal.

Errors are plain `OSError`s; callers turn them into their own words.
"""

from __future__ import annotations

import contextlib
import functools
import os
import queue
import secrets
import stat
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from toolgate.core.beneath import Folders, open_folder_beneath, parent_beneath, split_beneath


@dataclass(frozen=True, slots=True)
class StagedFile:
    """New bytes for `target`, fsynced in `temp` beside it, not yet in place: `commit` or `discard` it."""

    temp: Path
    target: Path

    def commit(self) -> os.stat_result:
        """Move the staged bytes into place with one rename and make that durable; returns the new file's stat."""
        self._rename()
        _fsync_directory(self.target.parent)
        return os.stat(self.target)

    def _rename(self, hold_from_bytes: int | None = None) -> None:
        replaced = _hold_replaced(self.target, _RELEASE_LATER_BYTES if hold_from_bytes is None else hold_from_bytes)
        try:
            os.replace(self.temp, self.target)
        finally:
            if replaced is not None:
                _release_later(replaced)

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.temp.unlink()

    def directory(self) -> Path:
        return self.target.parent

    def stat(self) -> os.stat_result:
        return os.stat(self.target)


def stage_file(
    path: Path,
    data: bytes,
    *,
    new_file_mode: int | None = None,
    temp_prefix: str | None = None,
    temp_suffix: str = ".tmp",
) -> StagedFile:
    """Write `data` to a temp file in the directory of `path`'s real target (symlinks followed), with the
    target's mode and ownership, fsynced. Nothing visible changes until `commit`. The directory must exist.

    `temp_prefix`/`temp_suffix` name the temp file (default `.<name>.<random>.tmp`) so that a caller can
    recognise and sweep the ones a killed writer left behind."""
    target = Path(os.path.realpath(path))
    try:
        current: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        current = None
    if current is not None:
        mode = stat.S_IMODE(current.st_mode)
    else:
        mode = new_file_mode if new_file_mode is not None else 0o666 & ~_umask()
    prefix = temp_prefix if temp_prefix is not None else f".{target.name[:100]}."
    fd, temp_name = tempfile.mkstemp(prefix=prefix, suffix=temp_suffix, dir=target.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if current is not None:
                _keep_owner(handle, current)
            os.fchmod(handle.fileno(), mode)  # after chown, which may clear set-id bits
            _flush_to_disk(handle)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    return StagedFile(temp, target)


def write_file_atomically(
    path: Path,
    data: bytes,
    *,
    new_file_mode: int | None = None,
    temp_prefix: str | None = None,
    temp_suffix: str = ".tmp",
) -> os.stat_result:
    """Replace `path` (or the file its symlink points at) with `data`: see the module docstring for what is
    guaranteed. Returns the new file's stat. Raises OSError, leaving the original and no temp file."""
    staged = stage_file(path, data, new_file_mode=new_file_mode, temp_prefix=temp_prefix, temp_suffix=temp_suffix)
    try:
        return staged.commit()
    except BaseException:
        staged.discard()
        raise


def write_files_atomically(files: Sequence[tuple[Path, bytes]]) -> list[os.stat_result]:
    """Replace several files, each as `write_file_atomically` would (old or new bytes, never a mix; durable when
    this returns), with the slow part shared: the temp files are written and fsynced on a few threads at once
    (the filesystem commits concurrent fsyncs together), then renamed into place, then each directory is fsynced
    once for all its renames. Returns the new files' stats, in order.

    The batch is not one transaction: if a rename fails, the files before it are replaced and the rest are not
    (their temp files are removed) and the OSError is raised. If staging fails, nothing is replaced."""
    if len(files) <= 1:
        return [write_file_atomically(path, data) for path, data in files]
    return _write_batch([functools.partial(stage_file, path, data) for path, data in files])


@dataclass(frozen=True, slots=True)
class FileBeneath:
    """New bytes for the file at `path` ('/'-separated, relative to a root folder)."""

    path: bytes
    data: bytes
    # None: an existing file keeps its mode (a new one gets 0o666 minus the umask); True or False: its execute
    # bits are then set where it may be read, or cleared (as git checks a file out).
    executable: bool | None = None


def write_files_beneath(root: Path, files: Sequence[FileBeneath], *, folders: Folders) -> list[os.stat_result]:
    """Replace files beneath `root` as `write_files_atomically` does, without following a link anywhere: each
    folder on the way is opened from the one before it (see core.beneath; `folders` says what to do with one
    that is missing, or is a link or a file), and the temp file, the rename and the folder's fsync all go
    through that folder's descriptor, so a folder swapped for a link meanwhile is never written through. A link
    at a file's own name is replaced by the file. Returns the new files' stats, in order.

    The same batch rules as `write_files_atomically`; a batch over more than _MAX_FOLDERS folders is done in
    parts of that many (each part's staging before any of its renames)."""
    written: list[os.stat_result] = []
    start = 0
    while start < len(files):
        opened: dict[bytes, int] = {}
        stagers: list[Callable[[], _Staged]] = []
        try:
            for file in files[start:]:
                steps, name = split_beneath(file.path)
                key = b"/".join(steps)
                if key not in opened:
                    if len(opened) == _MAX_FOLDERS:
                        break
                    opened[key] = open_folder_beneath(root, steps, folders=folders)
                stagers.append(functools.partial(_stage_beneath, opened[key], name, file))
            written += _write_batch(stagers)
        finally:
            for fd in opened.values():
                os.close(fd)
        start += len(stagers)
    return written


def remove_file_beneath(root: Path, path: bytes, *, folders: Folders = "existing") -> None:
    """Remove the file (or link) at `path` beneath `root`, reached as `write_files_beneath` reaches it; nothing
    happens when it (or a folder on the way) is missing. A directory there raises IsADirectoryError."""
    try:
        folder, name = parent_beneath(root, path, folders=folders)
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder)
    finally:
        os.close(folder)


@dataclass(frozen=True, slots=True)
class _StagedBeneath:
    folder: int  # the descriptor of the folder both names are in; the batch closes it
    temp: bytes
    name: bytes

    def _rename(self, hold_from_bytes: int) -> None:
        replaced = _hold_replaced(self.name, hold_from_bytes, self.folder)
        try:
            os.rename(self.temp, self.name, src_dir_fd=self.folder, dst_dir_fd=self.folder)
        finally:
            if replaced is not None:
                _release_later(replaced)

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.temp, dir_fd=self.folder)

    def directory(self) -> int:
        return self.folder

    def stat(self) -> os.stat_result:
        return os.stat(self.name, dir_fd=self.folder, follow_symlinks=False)


@dataclass(slots=True)
class StagedBeneath:
    """`stage_file_beneath`'s new bytes, fsynced in a temp file beside their name, not yet in place. It holds the
    folder's descriptor until `commit` or `discard` (whichever comes first closes it; the other then does nothing
    with it): everything it does goes through that descriptor."""

    staged: _StagedBeneath
    _closed: bool = False

    @property
    def folder(self) -> int:
        if self._closed:
            raise ValueError("the staged file was committed or discarded already")
        return self.staged.folder

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self.staged.folder)

    def current(self) -> os.stat_result | None:
        """What is at the name now (a link itself, not followed); None when nothing is."""
        try:
            return os.stat(self.staged.name, dir_fd=self.folder, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def commit(self) -> os.stat_result:
        """One rename into place through the folder's descriptor, made durable; the new file's stat."""
        folder = self.folder
        try:
            self.staged._rename(_RELEASE_LATER_BYTES)
            _fsync_directory(folder)
            return self.staged.stat()
        except BaseException:
            self.staged.discard()  # a rename that failed leaves no temp file (after one that worked: no-op)
            raise
        finally:
            self._close()

    def discard(self) -> None:
        if self._closed:
            return
        try:
            self.staged.discard()
        finally:
            self._close()


def stage_file_beneath(
    root: Path | bytes,
    relative: bytes,
    data: bytes,
    *,
    folders: Folders,
    temp_prefix: bytes | None = None,
    temp_suffix: bytes = b".tmp",
) -> StagedBeneath:
    """`stage_file` for one file beneath `root`, reached as `write_files_beneath` reaches it (no link followed on
    the way; `folders` as there): its temp file is written, given the mode (and owner) of the file at the name,
    and fsynced, and nothing visible changes until `commit`. Between the two, the caller may check `current()`.
    A link at the name itself lends the file nothing and would be replaced by it: resolve the name first when it
    should be written through. `temp_prefix`/`temp_suffix`: as for `stage_file`."""
    folder, name = parent_beneath(root, relative, folders=folders)
    try:
        staged = _stage_beneath(folder, name, FileBeneath(relative, data), temp_prefix, temp_suffix)
    except BaseException:
        os.close(folder)
        raise
    return StagedBeneath(staged)


def _stage_beneath(
    folder: int, name: bytes, file: FileBeneath, temp_prefix: bytes | None = None, temp_suffix: bytes = b".tmp"
) -> _StagedBeneath:
    try:
        current: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        current = None
    if current is not None and not stat.S_ISREG(current.st_mode):
        current = None  # a link (or anything else) there is replaced, and lends the file nothing
    mode = stat.S_IMODE(current.st_mode) if current is not None else 0o666 & ~_umask()
    if file.executable is not None:
        mode = mode | ((mode & 0o444) >> 2) if file.executable else mode & ~0o111
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        prefix = b".%s." % name[:100] if temp_prefix is None else temp_prefix
        temp = prefix + secrets.token_hex(4).encode() + temp_suffix
        try:
            fd = os.open(temp, flags, 0o600, dir_fd=folder)
            break
        except FileExistsError:
            continue
    staged = _StagedBeneath(folder, temp, name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(file.data)
            if current is not None:
                _keep_owner(handle, current)
            os.fchmod(handle.fileno(), mode)  # after chown, which may clear set-id bits
            _flush_to_disk(handle)
    except BaseException:
        staged.discard()
        raise
    return staged


class _Staged(Protocol):
    def _rename(self, hold_from_bytes: int) -> None: ...
    def discard(self) -> None: ...
    def directory(self) -> Path | int: ...
    def stat(self) -> os.stat_result: ...


def _write_batch(stagers: Sequence[Callable[[], _Staged]]) -> list[os.stat_result]:
    """Stage every file on a few threads, then rename each into place, then fsync each directory once."""
    staged: list[_Staged] = []
    committed = 0
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(_STAGING_THREADS, len(stagers)))) as pool:
            futures = [pool.submit(stager) for stager in stagers]
            # Every staging is waited for, even after one failed, so that no temp file is left behind.
            failure: BaseException | None = None
            for future in futures:
                try:
                    staged.append(future.result())
                except BaseException as exc:
                    failure = failure or exc
            if failure is not None:
                raise failure
            for item in staged:
                # Every replaced file is freed later, whatever its size: freeing one waits on the filesystem's
                # journal, which on a busy disk costs milliseconds per file (100 small files: 150-400 ms in
                # series, against 1 ms when they are held and let go afterwards).
                item._rename(hold_from_bytes=0)
                committed += 1
            directories = list(dict.fromkeys(item.directory() for item in staged))
            list(pool.map(_fsync_directory, directories))
    except BaseException:
        for item in staged[committed:]:
            item.discard()
        raise
    return [item.stat() for item in staged]


# Enough to keep a disk's queue busy; more only adds threads waiting on the same journal commit.
_STAGING_THREADS = 8
# Folders a batch beneath a root holds open at once (one descriptor each, from staging to the last fsync).
_MAX_FOLDERS = 256
# Below this, freeing a file's blocks costs less than handing its descriptor to another thread (one file at a
# time; a batch defers them all, see write_files_atomically).
_RELEASE_LATER_BYTES = 1 << 20
# Descriptors waiting to be let go, at most: beyond, a replaced file is freed in the rename, as before, so that a
# restore of thousands of files never runs the process out of descriptors.
_MAX_HELD = 256
_to_release: queue.Queue[int] = queue.Queue()
_releaser_lock = threading.Lock()
_releaser: threading.Thread | None = None


def _hold_replaced(target: Path | bytes, min_bytes: int, folder: int | None = None) -> int | None:
    """A descriptor of the file about to be replaced, when it has at least `min_bytes` (freeing it is worth
    deferring) and not too many are held already."""
    if _to_release.qsize() >= _MAX_HELD:
        return None
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except OSError:
        return None  # absent, unreadable, or not a file we may open: it is freed inside the rename as before
    try:
        big = stat.S_ISREG((st := os.fstat(fd)).st_mode) and st.st_size >= min_bytes
    except OSError:
        big = False
    if not big:
        os.close(fd)
        return None
    return fd


def _release_later(fd: int) -> None:
    global _releaser
    with _releaser_lock:
        if _releaser is None or not _releaser.is_alive():
            _releaser = threading.Thread(target=_release_forever, name="toolgate-release-replaced", daemon=True)
            _releaser.start()
    _to_release.put(fd)


def _release_forever() -> None:
    while True:
        fd = _to_release.get()
        with contextlib.suppress(OSError):
            os.close(fd)  # the last reference to the replaced file: its blocks are freed now
        _to_release.task_done()


def wait_for_released_files() -> None:
    """Block until every replaced file held open by `commit` has been let go (for tests and orderly exits)."""
    _to_release.join()


def _keep_owner(handle: IO[bytes], current: os.stat_result) -> None:
    # Only root may give a file away, and anyone may fail to: ownership is kept where possible, never required.
    mine = os.fstat(handle.fileno())
    if (mine.st_uid, mine.st_gid) != (current.st_uid, current.st_gid):
        with contextlib.suppress(OSError):
            os.fchown(handle.fileno(), current.st_uid, current.st_gid)


def _flush_to_disk(handle: IO[bytes]) -> None:
    handle.flush()
    os.fsync(handle.fileno())


def _fsync_directory(directory: Path | int) -> None:
    # Makes the rename itself durable; some filesystems do not allow opening a directory, which is fine.
    with contextlib.suppress(OSError):
        if isinstance(directory, int):
            os.fsync(directory)  # a descriptor the caller holds and closes
            return
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _umask() -> int:
    # Read rather than set-and-restore: os.umask() changes the whole process's umask for a moment, which races
    # with other threads creating files.
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current
