"""strace's log → the files a command changed and the programs it ran. Pure: text in, events out.

The log is `strace -f -y -qq -s 4096 -e trace=%file,%process,fchdir` output: one line per system call, prefixed
by the process id, with `<unfinished ...>` / `<... name resumed>` halves when processes interleave. A write is
any call that creates, changes, renames, links or removes a file, or opens one for writing, whether or not it
succeeded (a read-only command that tries to write is the finding; the sandbox is what makes it fail). Relative
paths are resolved against the process's directory (chdir and fchdir followed, inherited by children).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

_LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(.*)$")
_UNFINISHED = " <unfinished ...>"
_RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$")
_FD_PATH = re.compile(r"^-?\d+<(.*)>$")
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE")

# For each call that changes the file system: which arguments are (dirfd, path) pairs that it changes. A
# negative dirfd index means the path is relative to the process's directory.
_CHANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "creat": ((-1, 0),),
    "rename": ((-1, 0), (-1, 1)),
    "renameat": ((0, 1), (2, 3)),
    "renameat2": ((0, 1), (2, 3)),
    "link": ((-1, 1),),
    "linkat": ((2, 3),),
    "symlink": ((-1, 1),),
    "symlinkat": ((1, 2),),
    "unlink": ((-1, 0),),
    "unlinkat": ((0, 1),),
    "rmdir": ((-1, 0),),
    "mkdir": ((-1, 0),),
    "mkdirat": ((0, 1),),
    "mknod": ((-1, 0),),
    "mknodat": ((0, 1),),
    "chmod": ((-1, 0),),
    "fchmodat": ((0, 1),),
    "chown": ((-1, 0),),
    "lchown": ((-1, 0),),
    "fchownat": ((0, 1),),
    "truncate": ((-1, 0),),
    "utime": ((-1, 0),),
    "utimes": ((-1, 0),),
    "utimensat": ((0, 1),),
    "futimesat": ((0, 1),),
    "setxattr": ((-1, 0),),
    "lsetxattr": ((-1, 0),),
    "removexattr": ((-1, 0),),
    "lremovexattr": ((-1, 0),),
}
_OPENS: dict[str, tuple[int, int, int]] = {"open": (-1, 0, 1), "openat": (0, 1, 2), "openat2": (0, 1, 2)}


@dataclass(frozen=True, slots=True)
class Write:
    call: str
    path: str
    result: str  # "0", "3", "-1 EROFS (Read-only file system)"

    def describe(self) -> str:
        outcome = "succeeded" if not self.result.startswith("-") else f"failed: {self.result}"
        return f"{self.call} {self.path} ({outcome})"


@dataclass(frozen=True, slots=True)
class Exec:
    path: str
    argv: tuple[str, ...]
    result: str = "0"

    def describe(self) -> str:
        outcome = "" if not self.result.startswith("-") else f" (failed: {self.result})"
        return f"execve {self.path} {list(self.argv)}{outcome}"


@dataclass(frozen=True, slots=True)
class Trace:
    writes: tuple[Write, ...]
    # Tried too: a program that is not installed here (gpg, a pager) runs where it is.
    execs: tuple[Exec, ...]


def split_arguments(text: str) -> list[str]:
    """The top-level, comma-separated arguments of a call as strace prints them (strings, arrays, structs)."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        elif char == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if current:
        out.append("".join(current).strip())
    return out


def c_string(text: str) -> str | None:
    """The value of a C string literal as strace prints it ("a\\nb", possibly followed by ... when cut)."""
    text = text.removesuffix("...")
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    raw = text[1:-1].encode("latin-1", "backslashreplace")
    return raw.decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")


def _string_array(text: str) -> tuple[str, ...]:
    if not text.startswith("["):
        return ()
    return tuple(v for v in (c_string(a) for a in split_arguments(text[1:-1])) if v is not None)


def _resolve(directory: str, dirfd: str | None, path: str) -> str:
    if path.startswith("/"):
        return posixpath.normpath(path)
    base = directory
    if dirfd is not None and (match := _FD_PATH.match(dirfd)):
        base = match.group(1)
    return posixpath.normpath(posixpath.join(base, path))


def _join_halves(lines: list[str]) -> list[str]:
    """Whole lines: each `<unfinished ...>` half joined to its `<... resumed>` half."""
    pending: dict[str, str] = {}
    out: list[str] = []
    for line in lines:
        if line.endswith(_UNFINISHED):
            pid = line.split(None, 1)[0]
            pending[pid] = line.removesuffix(_UNFINISHED)
            continue
        resumed = _RESUMED.match(line)
        if resumed:
            pid, _, rest = resumed.groups()
            if pid in pending:
                out.append(pending.pop(pid) + rest)
            continue
        out.append(line)
    return out


def parse(log: str, start_directory: str) -> Trace:
    """The writes and execs in a strace log of processes that started in `start_directory`."""
    lines = _join_halves(log.splitlines())
    # A child's calls can be logged before its parent's clone returns: know every child's parent up front.
    parents: dict[str, str] = {}
    for match in filter(None, map(_LINE.match, lines)):
        if match.group(2) in ("clone", "clone3", "fork", "vfork") and match.group(4).isdigit():
            parents[match.group(4)] = match.group(1)
    directories: dict[str, str] = {}
    writes: list[Write] = []
    execs: list[Exec] = []
    for line in lines:
        match = _LINE.match(line)
        if not match:
            continue
        pid, call, arguments, code, rest = match.groups()
        if pid not in directories:
            # A parent in clone cannot move, so its directory now is the one the child started in.
            directories[pid] = directories.get(parents.get(pid, ""), start_directory)
        directory = directories[pid]
        result = f"{code}{rest}".strip()
        args = split_arguments(arguments)
        ok = not code.startswith("-")
        if call == "chdir" and ok and args and (path := c_string(args[0])) is not None:
            directories[pid] = _resolve(directory, None, path)
        elif call == "fchdir" and ok and args and (fd := _FD_PATH.match(args[0])):
            directories[pid] = fd.group(1)
        elif call in ("execve", "execveat"):
            offset = 1 if call == "execveat" else 0
            path = c_string(args[offset]) if len(args) > offset else None
            if path is not None:
                dirfd = args[0] if call == "execveat" else None
                argv = _string_array(args[offset + 1]) if len(args) > offset + 1 else ()
                execs.append(Exec(_resolve(directory, dirfd, path), argv, result))
        elif call in _OPENS:
            dirfd_index, path_index, flags_index = _OPENS[call]
            if len(args) > max(path_index, flags_index) and any(f in args[flags_index] for f in _WRITE_FLAGS):
                path = c_string(args[path_index])
                dirfd = args[dirfd_index] if dirfd_index >= 0 else None
                if path is not None:
                    writes.append(Write(call, _resolve(directory, dirfd, path), result))
        elif call in _CHANGES:
            for dirfd_index, path_index in _CHANGES[call]:
                if len(args) <= path_index:
                    continue
                dirfd = args[dirfd_index] if dirfd_index >= 0 else None
                path = c_string(args[path_index])
                if path is None and dirfd is not None and (fd := _FD_PATH.match(dirfd)):
                    path = fd.group(1)  # utimensat(fd, NULL, …): the open file itself
                if path is not None:
                    writes.append(Write(call, _resolve(directory, dirfd, path), result))
    return Trace(tuple(writes), tuple(execs))
