"""The ripgrep binary: where it is, running it under a time limit, and what its errors mean.

toolgate depends on the `ripgrep` wheel, which installs `rg` next to the Python interpreter; a `rg` on
PATH is the fallback. Tools get it through the `RIPGREP` dependency, so tests can point it at another
binary or give it a tiny time limit.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Literal

import anyio

from toolgate.core.deps import Dep, Resolver
from toolgate.core.errors import ErrorKind, StateError, ToolError, ToolFailure
from toolgate.text.ripgrep_output import PathPrefix
from toolgate.text.suggest import closest_names

DEFAULT_TIME_LIMIT = 20.0
# Past this much output the search is stopped: the model could never read it all, and memory is finite.
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024
_MAX_STDERR_BYTES = 64 * 1024
_READ_CHUNK = 1 << 20

# Version-control directories are never searched (ripgrep skips hidden files unless told, and we tell it).
VCS_EXCLUDES = tuple(f"--glob=!{name}" for name in (".git", ".svn", ".hg", ".bzr", ".jj", ".sl"))

Stopped = Literal["time_limit", "output_limit"]


def find_ripgrep() -> Path | None:
    """The `rg` installed with toolgate's Python (the wheel's script directory), else the first on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    candidates = [Path(sys.executable).parent / name]
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / name)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("rg")
    return Path(found) if found else None


@dataclass(frozen=True, slots=True)
class RgRun:
    stdout: bytes
    stderr: str
    returncode: int | None  # None when we stopped it
    stopped: Stopped | None = None
    stderr_truncated: bool = False

    @property
    def partial(self) -> bool:
        return self.stopped is not None


class SearchAt:
    """Where ripgrep searches (the root argument, and the descriptor it reaches the root through) and how the
    paths it prints name the root again as the model named it (`names`).

    Given a root by name, ripgrep looks the name up itself, after the permission decision: a folder on the way
    swapped for a symbolic link meanwhile would send it elsewhere. Given an opened folder instead, it is started
    in that folder (its working directory is set through /proc/self/fd/<fd> in the started process, so no name
    is looked up) and searches `.`; an opened file it inherits, and searches /proc/self/fd/<fd>.

    Why `.` and not /proc/self/fd/<fd> for a folder: ripgrep matches --glob exclusions relative to its working
    directory, which then is the searched folder (as positive path globs are matched, by Grep itself); under
    /proc/self/fd they would match nothing. It still finds the .gitignore files of the folders above (it
    canonicalises the root first). The descriptor is closed once ripgrep has started (`close`; again: nothing)."""

    def __init__(
        self, root: Path, argument: str, names: PathPrefix, *, folder: int | None = None, file: int | None = None
    ) -> None:
        self.root = root  # the root as the model named it
        self.argument = argument
        self.names = names
        self._folder = folder
        self._file = file

    @classmethod
    def by_name(cls, root: Path) -> SearchAt:
        """The root by its name (no /proc to reach an opened one through)."""
        name = os.fsencode(root)
        return cls(root, str(root), PathPrefix(name, name))

    @classmethod
    def in_folder(cls, root: Path, folder: int) -> SearchAt:
        """The opened folder `folder` (owned from now on), searched as `.`: ripgrep prints `./path`."""
        return cls(root, ".", PathPrefix(b"./", os.fsencode(root).rstrip(b"/") + b"/"), folder=folder)

    @classmethod
    def of_file(cls, root: Path, file: int) -> SearchAt:
        """The opened file `file` (owned from now on; an O_PATH descriptor will do), inherited by ripgrep."""
        argument = f"/proc/self/fd/{file}"
        return cls(root, argument, PathPrefix(os.fsencode(argument), os.fsencode(root)), file=file)

    @property
    def cwd(self) -> str | None:
        # Resolved by the started process before it runs ripgrep: its own /proc/self/fd, holding this descriptor.
        return None if self._folder is None else f"/proc/self/fd/{self._folder}"

    @property
    def pass_fds(self) -> tuple[int, ...]:
        # The folder too: open in the started process whatever the order of its chdir and its closing of
        # descriptors. ripgrep then holds one more descriptor, of the folder it runs in: nothing `.` does not reach.
        return tuple(fd for fd in (self._folder, self._file) if fd is not None)

    def close(self) -> None:
        for fd in (self._folder, self._file):
            if fd is not None:
                os.close(fd)
        self._folder = self._file = None

    def __enter__(self) -> SearchAt:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def named_messages(self, stderr: str) -> str:
        """ripgrep's complaints (`rg: PATH: …`) with the paths named as the model named the root."""
        if self.names.same:
            return stderr
        printed = "rg: " + self.names.printed.decode("ascii")
        if printed not in stderr:
            return stderr
        named = "rg: " + self.names.named.decode("utf-8", errors="replace")  # as stderr itself is decoded
        lines = stderr.split("\n")
        return "\n".join(named + line[len(printed) :] if line.startswith(printed) else line for line in lines)


@dataclass(frozen=True, slots=True)
class Ripgrep:
    binary: Path | None
    time_limit: float = DEFAULT_TIME_LIMIT
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES

    def describe_stop(self, stopped: Stopped) -> str:
        if stopped == "time_limit":
            return f"the search ran past its {self.time_limit:g}-second time limit and was stopped"
        limit = self.max_output_bytes
        size = f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit:,} bytes"
        return f"the search produced more than {size} of output and was stopped"

    async def type_names(self) -> list[str]:
        """The file type names ripgrep knows (`rg --type-list`: one `name: globs` line each)."""
        run = await self.run(["--type-list"])
        return [line.split(":", 1)[0] for line in run.stdout.decode("utf-8", errors="replace").splitlines()]

    async def run(self, args: Sequence[str], at: SearchAt | None = None) -> RgRun:
        """Run `rg --no-config ARGS` as a real subprocess; with `at`, `-- ROOT` after them (see `SearchAt`: its
        descriptor is closed once ripgrep started, and its messages name the root as the model did).

        On the time limit (or the output limit) it is killed and what it printed so far comes back with
        `stopped` set; if the calling task is cancelled, it is killed before the cancellation goes on.
        """
        if self.binary is None:
            raise ToolFailure(
                "The search tools need ripgrep (rg), and it is not installed: toolgate's `ripgrep` package is "
                "missing and no `rg` is on PATH. Reinstall toolgate (pip install toolgate) or install ripgrep."
            )
        if any("\x00" in arg for arg in args):
            # No program can receive one in its arguments; it can only be a mistake in the call.
            raise StateError(
                "The pattern, glob or path contains a NUL byte (\\x00), which cannot be searched for or passed "
                "to ripgrep. Send it without the NUL byte."
            )
        # --no-config: a user's RIPGREP_CONFIG_PATH must not change the output format we parse.
        argv = [str(self.binary), "--no-config", *args]
        if at is not None:
            argv += ["--", at.argument]
        try:
            process = _start(argv, at)
        except OSError as exc:
            raise ToolFailure(f"ripgrep ({self.binary}) could not be started: {exc.strerror or exc}.") from None
        finally:
            if at is not None:
                at.close()  # ripgrep holds what it needs of it now (its working directory, or its own copy)
        assert process.stdout is not None and process.stderr is not None
        # Each pipe is read to its end on a thread of its own, in blocking reads: ripgrep writes once per
        # file, and an event loop woken for each of those writes cost more CPU than the parsing.
        stdout = _PipeReader(process.stdout, self.max_output_bytes, on_overflow=lambda: _kill(process))
        stderr = _PipeReader(process.stderr, _MAX_STDERR_BYTES, on_overflow=None)  # drained: a full pipe stalls rg
        # The three threads of this search wait on each other (rg exits only once its pipes are read), so they
        # must not queue behind other searches' threads for the shared default limiter's tokens.
        threads = anyio.CapacityLimiter(3)
        stopped: Stopped | None = None
        try:
            async with anyio.create_task_group() as group:
                # Abandoned on cancel: killing ripgrep ends both pipes, and with them the threads.
                for reader in (stdout, stderr):
                    group.start_soon(
                        partial(anyio.to_thread.run_sync, reader.read_all, abandon_on_cancel=True, limiter=threads)
                    )
                try:
                    with anyio.move_on_after(self.time_limit) as deadline:
                        await anyio.to_thread.run_sync(process.wait, abandon_on_cancel=True, limiter=threads)
                finally:
                    _kill(process)  # past the time limit, or cancelled; the readers then get the rest and stop
            if deadline.cancelled_caught:
                stopped = "time_limit"
            elif stdout.overflowed:
                stopped = "output_limit"
        finally:
            with anyio.CancelScope(shield=True):
                _kill(process)
                await anyio.to_thread.run_sync(process.wait, limiter=threads)
        messages = stderr.data().decode("utf-8", errors="replace")
        return RgRun(
            stdout=stdout.data(),
            stderr=messages if at is None else at.named_messages(messages),
            returncode=None if stopped else process.returncode,
            stopped=stopped,
            stderr_truncated=stderr.overflowed,
        )


def _start(argv: list[str], at: SearchAt | None) -> subprocess.Popen[bytes]:
    # A fork and an exec, as quick as the event loop's own process start (which makes the same call inline).
    # Not in a new session: on Linux that also means a new scheduler autogroup, and on a busy machine that made
    # searches up to twice as slow in wall time for the same CPU time. ripgrep starts no processes of its own (we
    # never pass --pre), so killing it is killing all of it, and ends its pipes.
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=None if at is None else at.cwd,
        pass_fds=() if at is None else at.pass_fds,
    )


class _PipeReader:
    """Reads a pipe to its end on a worker thread, keeping up to `limit` bytes. Past the limit it calls
    `on_overflow` (which stops the writer) and stops keeping; with no `on_overflow` it reads on, dropping the rest."""

    def __init__(self, pipe: IO[bytes], limit: int, on_overflow: Callable[[], None] | None) -> None:
        self._pipe = pipe
        self._limit = limit
        self._on_overflow = on_overflow
        self._chunks: list[bytes] = []
        self._size = 0
        self.overflowed = False

    def read_all(self) -> None:
        fd = self._pipe.fileno()  # read directly: each read returns what the pipe holds, without waiting for more
        try:
            while chunk := os.read(fd, _READ_CHUNK):
                room = self._limit - self._size
                self._size += len(chunk)
                if room > 0:
                    self._chunks.append(chunk[:room])
                if self._size > self._limit and not self.overflowed:
                    self.overflowed = True
                    if self._on_overflow is not None:
                        self._on_overflow()
                        return
        finally:
            self._pipe.close()

    def data(self) -> bytes:
        return b"".join(self._chunks)


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()


def _default_ripgrep(_r: Resolver) -> Ripgrep:
    return Ripgrep(find_ripgrep())


RIPGREP: Dep[Ripgrep] = Dep("ripgrep", _default_ripgrep)


# --- what ripgrep's complaints mean ---------------------------------------------------------------------

_UNSUPPORTED = {
    "look-around": "look-ahead or look-behind ((?=…), (?!…), (?<=…), (?<!…)), which this regex engine does not "
    "support: match the surrounding text as part of the pattern instead, or search for the parts separately.",
    "backreferences": "a back-reference such as \\1, which this regex engine does not support: spell the "
    "repeated text out, or search for it separately.",
}


def explain_regex_error(stderr: str, pattern: str) -> str | None:
    """Plain words for an invalid pattern, or None when stderr is about something else."""
    if 'the literal "\\n" is not allowed' in stderr:
        return (
            f"The pattern {pattern!r} contains a line break, which only a multiline search can match. "
            "Set multiline: true, or search for one line at a time."
        )
    if "regex parse error" not in stderr and "error parsing regex" not in stderr:
        if "exceeds size limit" in stderr:
            return (
                f"The pattern {pattern!r} is too large to compile (it expands to too many states, usually "
                "from big repetition counts like {1000}). Simplify it."
            )
        return None
    found = re.search(r"^error: (.+)$", stderr, re.MULTILINE)
    reason = found.group(1).strip() if found else "it could not be parsed"
    for key, advice in _UNSUPPORTED.items():
        if key in reason:
            return f"The pattern {pattern!r} uses {advice}"
    return (
        f"The pattern {pattern!r} is not a valid regular expression: {reason}. Patterns use Rust regex syntax, "
        "where ( ) [ ] { } . * + ? | ^ $ and \\ are special: put a backslash before one to match it literally "
        "(for example \\( or \\{)."
    )


def file_errors_note(run: RgRun, what: str) -> str | None:
    """A note quoting ripgrep's per-file complaints (unreadable files, loops), which do not stop a search."""
    errors = [line[4:] for line in run.stderr.splitlines() if line.startswith("rg: ") and "regex" not in line]
    if run.stderr_truncated and errors:
        errors.pop()  # probably cut off mid-line
    if not errors:
        return None
    more = ""
    if run.stderr_truncated:
        more = " (and more)"
    elif len(errors) > 3:
        more = f" (and {len(errors) - 3:,} more)"
    return f"{what}: " + "; ".join(errors[:3]) + more + "."


class SearchInputError(ToolError):
    """A pattern or filter ripgrep cannot use: the call's arguments are wrong, not the files."""

    kind = ErrorKind.INVALID_INPUT


# Names people reach for that ripgrep spells differently.
_TYPE_ALIASES = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "rs": "rust",
    "golang": "go",
    "markdown": "md",
    "c++": "cpp",
    "shell": "sh",
    "bash": "sh",
    "yml": "yaml",
    "kt": "kotlin",
    "rb": "ruby",
}


async def explain_search_error(run: RgRun, pattern: str, ripgrep: Ripgrep) -> ToolError:
    """The error to raise for a search that ripgrep refused (exit status 2 and no results)."""
    regex = explain_regex_error(run.stderr, pattern)
    if regex is not None:
        return SearchInputError(regex)
    unknown_type = re.search(r"unrecognized file type: (\S+)", run.stderr)
    if unknown_type:
        wanted = unknown_type.group(1)
        names = await ripgrep.type_names()
        guesses = [_TYPE_ALIASES[wanted.lower()]] if wanted.lower() in _TYPE_ALIASES else []
        guesses += [g for g in closest_names(wanted, names) if g not in guesses]
        hint = f" Did you mean {' or '.join(repr(g) for g in guesses[:3])}?" if guesses else ""
        return SearchInputError(
            f"{wanted!r} is not a file type name ripgrep knows.{hint} Common ones are py, js, ts, rust, go, java, "
            'c, cpp, md, json, yaml, sh; or filter by file name with glob instead (for example "*.vue").'
        )
    message = run.stderr.strip() or f"ripgrep exited with status {run.returncode} and printed nothing"
    return ToolFailure(f"The search failed: {message[:2000]}")
