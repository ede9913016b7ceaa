"""The real `git` binary, pointed at a shadow repository and never at the user's.

Every call gets its own GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE, no system or global config, no hooks and no
automatic gc, so nothing the user configured (aliases, hooks, fsmonitor, `gc.auto`) runs, and nothing the
user's repository holds (its index, refs, stash, config) is read as ours or written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolgate.checkpoints.models import CheckpointError
from toolgate.core.child_env import child_environment

MIN_VERSION = (2, 25)
# `-c` settings that beat anything in the shadow repo's own config file too.
_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "gc.auto=0",
    "maintenance.auto=false",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.splitIndex=true",  # an index write writes what changed, not all entries (most checkpoints change few)
    "index.skipHash=false",  # the index's closing checksum is what its remembered tree names (index_tree.py)
    "core.quotePath=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.filemode=true",
    "commit.gpgSign=false",
    "advice.detachedHead=false",
)
_IDENTITY = {
    "GIT_AUTHOR_NAME": "toolgate",
    "GIT_AUTHOR_EMAIL": "checkpoints@toolgate.invalid",
    "GIT_COMMITTER_NAME": "toolgate",
    "GIT_COMMITTER_EMAIL": "checkpoints@toolgate.invalid",
}
# Variables that would point git somewhere else than we say, or change what it does.
_DROPPED_PREFIXES = ("GIT_",)
# How a loose object is compressed (git inflates any zlib stream, so this changes only time and size, never the
# id). Level 1 is git's own default for loose objects (core.looseCompression) and the fastest level that looks
# for repeats; it is most of what storing big content costs, and slowest where it saves least (random bytes:
# 10-20x a copy, for nothing). Level 6 would take 3-4x as long on code for 20% less. A sample of a big object
# picks one of the three ways below.
_SAMPLE_BYTES = 64 * 1024  # compressed twice to decide: 1-4 ms, a few % of compressing 5 MB
_STORED = (0, zlib.Z_DEFAULT_STRATEGY)  # no compression: a copy and a checksum
_SYMBOLS_ONLY = (1, zlib.Z_HUFFMAN_ONLY)  # shorter codes for frequent bytes, no search for repeats (4-5x faster)
_REPEATS = (1, zlib.Z_DEFAULT_STRATEGY)


def git_version(binary: str = "git") -> tuple[int, ...] | str:
    """The version of `git` on PATH, or a sentence saying why checkpoints cannot use it."""
    found = shutil.which(binary)
    if found is None:
        return "git is not installed (no `git` on PATH); install git to turn checkpoints on"
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"`git --version` failed ({exc}); checkpoints are off until git works"
    match = re.search(r"(\d+)\.(\d+)", out)
    if match is None:
        return f"`git --version` printed {out.strip()!r}, which is not a version; checkpoints are off"
    version = (int(match.group(1)), int(match.group(2)))
    if version < MIN_VERSION:
        wanted = ".".join(map(str, MIN_VERSION))
        return f"git {out.split()[-1]} is too old for checkpoints (they need {wanted} or newer); upgrade git"
    return version


@dataclass(frozen=True, slots=True)
class ShadowGit:
    """One shadow repository (`git_dir`) over one captured root (`work_tree`)."""

    binary: str
    git_dir: Path
    work_tree: Path
    excludes_file: Path | None = None  # the user's `.git/info/exclude`, read (never written)
    timeout: float = 60.0

    def environment(self, index: Path | None) -> dict[str, str]:
        # Secrets scrubbed as for every child (git needs none), and no GIT_* of ours or the user's leaks in.
        env = {k: v for k, v in child_environment().items() if not k.startswith(_DROPPED_PREFIXES)}
        env.update(_IDENTITY)
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.work_tree),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_ATTR_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL="/dev/null",
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            LC_ALL="C",
        )
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def run(
        self,
        args: Sequence[str],
        *,
        index: Path | None = None,
        stdin: bytes | None = None,
        timeout: float | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        return self.start(args, index=index, stdin=stdin, timeout=timeout, check=check).finish()

    def start(
        self,
        args: Sequence[str],
        *,
        index: Path | None = None,
        stdin: bytes | None = None,
        timeout: float | None = None,
        check: bool = True,
        own_group: bool = False,
    ) -> RunningGit:
        """Start git with `args` and return at once: what it answers is `finish()`'s (so that two listings that
        do not depend on each other run side by side)."""
        config: list[str] = []
        for item in _SAFE_CONFIG:
            config += ["-c", item]
        if self.excludes_file is not None:
            config += ["-c", f"core.excludesFile={self.excludes_file}"]
        try:
            process = subprocess.Popen(
                [self.binary, *config, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.environment(index),
                cwd=self.work_tree,
                start_new_session=own_group,  # a process that outlives the call is ended with its group
            )
        except OSError as exc:
            raise CheckpointError(f"git could not be started ({exc}); checkpoints need a working git") from None
        limit = self.timeout if timeout is None else timeout
        return RunningGit(process, stdin if stdin is not None else b"", args[0], limit, check)

    def initialise(self) -> None:
        """Create the shadow repository (bare: it has no work tree of its own; each call names one)."""
        env = self.environment(None)
        del env["GIT_DIR"], env["GIT_WORK_TREE"]
        env["GIT_DEFAULT_HASH"] = "sha1"  # the object ids write_object computes (a git that knows no other ignores it)
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [self.binary, "init", "-q", "--bare", str(self.git_dir)],
            capture_output=True,
            env=env,
            cwd=self.git_dir.parent,
            timeout=self.timeout,
        )
        if done.returncode != 0:
            raise CheckpointError(
                f"the checkpoint store {self.git_dir} could not be created: {done.stderr.decode(errors='replace')}"
            )
        self.run(["config", "core.bare", "false"])
        self.run(["config", "core.logAllRefUpdates", "false"])

    def check_object_format(self) -> None:
        """Objects are written in-process with SHA-1 ids (see write_object): a store of another format is refused."""
        config = (self.git_dir / "config").read_text(encoding="utf-8", errors="replace")
        if re.search(r"^\s*objectformat\s*=\s*(?!sha1\s*$)", config, re.IGNORECASE | re.MULTILINE):
            raise CheckpointError(
                f"the checkpoint store {self.git_dir} does not use SHA-1 object ids, which toolgate writes; "
                "delete that directory (its checkpoints go with it) and the next checkpoint makes it afresh"
            )

    def output(self, args: Sequence[str], *, index: Path | None = None, stdin: bytes | None = None) -> bytes:
        return self.run(args, index=index, stdin=stdin).stdout


@dataclass(slots=True)
class RunningGit:
    """A git process `ShadowGit.start` started; `finish()` waits for its answer within the time cap."""

    process: subprocess.Popen[bytes]
    stdin: bytes
    command: str
    limit: float
    check: bool

    def finish(self) -> subprocess.CompletedProcess[bytes]:
        try:
            out, err = self.process.communicate(self.stdin, timeout=self.limit)
        except subprocess.TimeoutExpired:
            self.stop()
            raise CheckpointError(
                f"git {self.command} took longer than {self.limit:g} s (the checkpoint time cap); "
                "add large generated folders to the checkpoint ignore list or raise the cap"
            ) from None
        except BaseException:
            self.stop()
            raise
        done = subprocess.CompletedProcess(self.process.args, self.process.returncode, out, err)
        if self.check and done.returncode != 0:
            detail = err.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {self.command} failed: {detail[-1] if detail else f'exit {done.returncode}'}")
        return done

    def stop(self) -> None:
        """Kill it and reap it (its answer is no longer wanted)."""
        self.process.kill()
        self.process.communicate()


def split_z(data: bytes) -> list[bytes]:
    """NUL-separated git output (`-z`) as raw path bytes."""
    return [part for part in data.split(b"\0") if part]


def read_blobs(git: ShadowGit, shas: list[str]) -> dict[str, bytes]:
    """Several objects' contents from one `git cat-file --batch` (one that is missing is left out)."""
    if not shas:
        return {}
    out = git.output(["cat-file", "--batch"], stdin="".join(f"{s}\n" for s in shas).encode())
    found: dict[str, bytes] = {}
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        header = out[at:end].decode().split(" ")
        if len(header) != 3:  # "<sha> missing"
            at = end + 1
            continue
        sha, _kind, size = header
        start = end + 1
        found[sha] = out[start : start + int(size)]
        at = start + int(size) + 1
    return found


def object_id(kind: str, data: bytes) -> str:
    """The id git gives `data` as an object of `kind` ("blob", "commit"): the SHA-1 of its header and bytes, as
    `git hash-object` computes it for bytes no filter changes (info/attributes turns every conversion off)."""
    digest = hashlib.sha1(b"%s %d\0" % (kind.encode("ascii"), len(data)), usedforsecurity=False)
    digest.update(data)
    return digest.hexdigest()


def loose_compression(data: bytes) -> tuple[int, int]:
    """The zlib level and strategy for storing `data`, from what compressing a sample of it (its start and its
    middle, so that a text header before binary content does not decide alone) each way saves:
    nothing worth having (random or already-compressed bytes) → stored; about as much without looking for repeats
    as with (base64, hex, random text) → symbols only; else → repeats. Small objects are not sampled: level 1
    costs them little."""
    if len(data) <= _SAMPLE_BYTES:
        return _REPEATS
    half = _SAMPLE_BYTES // 2
    middle = len(data) // 2
    sample = data[:half] + data[middle : middle + half]
    with_repeats = len(zlib.compress(sample, _REPEATS[0]))
    if with_repeats > len(sample) * 15 // 16:
        return _STORED  # a saving under 1/16 is not worth 10-20 times the time of a copy
    symbols = _compressor(_SYMBOLS_ONLY)
    without_repeats = len(symbols.compress(sample) + symbols.flush())
    return _SYMBOLS_ONLY if without_repeats <= with_repeats * 9 // 8 else _REPEATS


def _compressor(way: tuple[int, int]) -> zlib._Compress:
    level, strategy = way
    return zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS, 8, strategy)  # zlib's own window and memory


def write_object(git: ShadowGit, kind: str, data: bytes, known_id: str | None = None) -> str:
    """Store `data` as a loose object the way git does (zlib-compressed header and bytes in a temp file, linked
    into place, read-only), without starting a git process; an object already there is left as it is. Returns
    its id. `known_id`: the id when the caller already hashed `data` (one pass over a big file, not two)."""
    oid = known_id or object_id(kind, data)
    directory = git.git_dir / "objects" / oid[:2]
    final = directory / oid[2:]
    if final.exists():
        return oid
    directory.mkdir(exist_ok=True)
    compressor = _compressor(loose_compression(data))
    handle, temp = tempfile.mkstemp(prefix="tmp_obj_", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(compressor.compress(b"%s %d\0" % (kind.encode("ascii"), len(data))))
            out.write(compressor.compress(data))
            out.write(compressor.flush())
        os.chmod(temp, 0o444)
        try:
            os.link(temp, final)
        except FileExistsError:
            pass  # another session stored the same bytes meanwhile
        except OSError:
            os.replace(temp, final)  # a file system without hard links: git falls back to a rename too
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return oid


def write_commit(git: ShadowGit, tree: str, parents: Sequence[str], message: str) -> str:
    """A commit of `tree` (its parents, its message) written in-process: what `git commit-tree` writes, without
    a process per checkpoint. The identity is the store's own; the checkpoint's time is in its message."""
    stamp = f"{int(time.time())} +0000"
    person = f"{_IDENTITY['GIT_COMMITTER_NAME']} <{_IDENTITY['GIT_COMMITTER_EMAIL']}> {stamp}"
    lines = [f"tree {tree}", *(f"parent {parent}" for parent in parents), f"author {person}", f"committer {person}"]
    body = "\n".join(lines) + "\n\n" + message.rstrip("\n") + "\n"
    return write_object(git, "commit", body.encode("utf-8", "surrogateescape"))
