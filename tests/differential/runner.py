"""Run commands the classifier calls read-only, for real, and report the ones that wrote or ran something else.

Each command runs under real bash in a throwaway copy of a small git repository (with a home and an outside
directory next to it), inside bwrap: the host's root read-only, /tmp and the other directories the product's
sandbox makes private (sandbox.policy.PRIVATE_DIRS) private and empty, the copy bound writable at /tmp/scratch,
no network, its own pid namespace, and strace following every process. The
copy is made from a template built once per batch, and made afresh after any command that tried to change it,
so no command sees another's leftovers.

A finding is a read-only verdict whose command
- wrote a file: opened one for writing, created, renamed, linked, removed, or changed its mode, owner or times,
  anywhere but the private directories and /dev (tried counts: the sandbox is what makes the try fail), or
- executed a program outside its table (or tried to: one not installed here runs where it is): an execve of
  anything but bash, the programs the command names (looked
  through wrappers and xargs as the classifier does), their scripts' interpreters and the helpers those programs
  are known to exec.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.differential import trace

from toolgate.bash.classify import classify
from toolgate.bash.parse import Word
from toolgate.bash.programs import PROGRAMS, WRAPPERS, unwrap
from toolgate.sandbox.policy import PRIVATE_DIRS
from toolgate.shell.executor import EXTRA_ENV

SCRATCH = "/tmp/scratch"  # where the copy is, inside the sandbox
REPOSITORY = f"{SCRATCH}/repo"
TRACE_DIR = "/tmp/trace"  # where strace writes its log
TIMEOUT_S = 10.0
# The directories the product's read-only sandbox leaves private (a tmpfs each): what a command writes there is
# gone when it ends. Those that are links (/var/run → /run) are covered by their target.
_PRIVATE = tuple(str(p) for p in PRIVATE_DIRS if p.is_dir() and not p.is_symlink())
# Paths a read-only command may write: the private directories and devices (/dev/null, /dev/tty); /proc is not
# a file. The scratch copy and the trace are bound inside /tmp, and writing them is writing the workspace.
_MAY_WRITE = (*(f"{p}/" for p in _PRIVATE), "/dev/", "/proc/")
_MAY_NOT_WRITE = (f"{SCRATCH}/", f"{TRACE_DIR}/")
# git status (and diff, describe…) refresh the index when they can take its lock, and go on without when they
# cannot (git's "optional locks"; the read-only sandbox makes them fail). Tolerated for git, and only these paths.
_GIT_INDEX_REFRESH = (f"{REPOSITORY}/.git/index.lock", f"{REPOSITORY}/.git/index")
# Programs that exec a helper as part of what they are (egrep is `exec grep -E`, git runs git).
_HELPERS: dict[str, frozenset[str]] = {
    "egrep": frozenset({"grep"}),
    "fgrep": frozenset({"grep"}),
    "git": frozenset({"git"}),
}
_FIXTURE_FILES: dict[str, str] = {
    "notes.txt": "TODO: write the notes\nalpha beta gamma\n",
    "README.md": "# fixture\n\nA small repository for the differential harness.\n",
    "src/main.py": "def main() -> None:\n    print('hello')  # TODO\n",
    "src/lib/util.py": "VALUE = 1\n",
    "docs/guide.md": "guide\n",
    "data.json": '{"name": "fixture", "items": [1, 2, 3]}\n',
    ".gitignore": "build/\n*.log\n",
    # Program text a table must not let a read-only command load (awk -f, sed -f).
    "prog.awk": 'BEGIN { system("touch pwned.out") }\n',
    "script.sed": "w pwned.out\n",
    # A file whose name is an option, for globs that expand to it (`sort *`).
    "--output=glob.out": "",
}
_SECOND_COMMIT: dict[str, str] = {"notes.txt": "TODO: write the notes\nalpha beta gamma\ndelta\n", "CHANGES": "v2\n"}


class HarnessUnavailable(RuntimeError):
    pass


def require_tools() -> None:
    """Fail with what to do when bwrap or strace is missing (the harness cannot judge anything without them)."""
    missing = [tool for tool in ("bwrap", "strace", "git") if shutil.which(tool) is None]
    if missing:
        raise HarnessUnavailable(
            f"the differential harness needs {', '.join(missing)}: run `make apt-setup` (scripts/setup-e2e.sh "
            "--apt-only installs bubblewrap and strace)"
        )


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent / "home")}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True, input=stdin, timeout=30
    )
    return done.stdout.strip()


# A commit with a (made-up) signature: a command that verifies it runs gpg, which no read-only table names.
_SIGNED_COMMIT = "\n".join(
    (
        "tree {tree}",
        "parent {parent}",
        "author Fixture <f@example.com> 1700000000 +0000",
        "committer Fixture <f@example.com> 1700000000 +0000",
        "gpgsig -----BEGIN PGP SIGNATURE-----",
        " ",  # a header's continuation lines start with a space
        " iQEzBAABCAAdFiEEfixturefixturefixturefixture=",
        " -----END PGP SIGNATURE-----",
        "",
        "signed",
        "",
    )
)


def build_template(root: Path) -> Path:
    """The fixture tree: a git repository with two commits, a tag, a branch, local changes; a home; outside."""
    template = root / "template"
    repo = template / "repo"
    for directory in (repo, template / "home", template / "outside"):
        directory.mkdir(parents=True)
    (template / "outside" / "secret.txt").write_text("outside the workspace\n")
    for name, text in _FIXTURE_FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", "Fixture"), ("user.email", "f@example.com")):
        _git(repo, "config", key, value)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first")
    _git(repo, "tag", "v1")
    _git(repo, "branch", "feature")
    for name, text in _SECOND_COMMIT.items():
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "second")
    signed = _SIGNED_COMMIT.format(tree=_git(repo, "rev-parse", "HEAD^{tree}"), parent=_git(repo, "rev-parse", "HEAD"))
    _git(
        repo, "update-ref", "refs/heads/main", _git(repo, "hash-object", "-t", "commit", "-w", "--stdin", stdin=signed)
    )
    # A remote, as most repositories have: a bare clone next to it (the network is off in the sandbox).
    _git(repo, "clone", "-q", "--bare", ".", str(template / "outside" / "origin.git"))
    _git(repo, "remote", "add", "origin", f"{SCRATCH}/outside/origin.git")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")  # as if fetched
    (repo / "README.md").write_text("# fixture\n\nchanged, not committed\n")
    (repo / "untracked.txt").write_text("new\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.log").write_text("ignored\n")
    return template


def allowed_programs(command: str) -> frozenset[str]:
    """bash, and every program the classifier's verdict names: each simple command's program, the wrappers it is
    looked through, what xargs runs, and the helpers those programs exec."""
    names = {"bash"}
    for simple in classify(command).commands:
        words = [Word.literal(w) for w in simple.argv]
        while words:
            name = words[0].value
            names.add(name)
            names |= _HELPERS.get(name, frozenset())
            if name in WRAPPERS:
                words = list(unwrap(name, words[1:]).command)
                continue
            checker = PROGRAMS.get(name)
            verdict = checker(name, words[1:]) if checker is not None else None
            words = list(verdict.runs) if verdict is not None and verdict.runs else []
            if words and words[-1].expansion:
                words = words[:-1]  # xargs's unseen arguments
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class Outcome:
    command: str
    reason: str  # the classifier's
    writes: tuple[trace.Write, ...]
    execs: tuple[trace.Exec, ...]  # outside the table
    timed_out: bool
    exit_code: int | None

    @property
    def is_finding(self) -> bool:
        return bool(self.writes or self.execs)

    def describe(self) -> str:
        lines = [f"$ {self.command}", f"  classifier: {self.reason}"]
        lines += [f"  wrote: {w.describe()}" for w in self.writes[:5]]
        lines += [f"  ran: {e.describe()}" for e in self.execs[:5]]
        return "\n".join(lines)


def _sandbox_argv(scratch: Path, log: Path, command: str) -> list[str]:
    environment = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": f"{SCRATCH}/home",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        **EXTRA_ENV,  # what the product's shell adds to every command
    }
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for private in _PRIVATE:
        argv += ["--tmpfs", private]
    argv += ["--bind", str(scratch), SCRATCH, "--bind", str(log.parent), TRACE_DIR]
    argv += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
    argv += ["--chdir", REPOSITORY, "--clearenv"]
    for key, value in environment.items():
        argv += ["--setenv", key, value]
    strace = ["strace", "-f", "-y", "-qq", "-s", "4096", "-e", "trace=%file,%process,fchdir"]
    return [*argv, *strace, "-o", f"{TRACE_DIR}/{log.name}", "bash", "-c", command]


@dataclass(slots=True)
class Slot:
    """One worker's copy of the fixture. It is reused while commands leave it as it was, and copied afresh from
    the template after one tried to change it (or was killed before its trace was complete)."""

    template: Path
    work: Path
    dirty: bool = True

    def run(self, command: str) -> Outcome:
        scratch, log = self.work / "scratch", self.work / "trace" / "log"
        if self.dirty:
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.copytree(self.template, scratch, symlinks=True)
            log.parent.mkdir(parents=True, exist_ok=True)
            self.dirty = False
        log.unlink(missing_ok=True)
        process = subprocess.Popen(
            _sandbox_argv(scratch, log, command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        timed_out = False
        try:
            code: int | None = process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
        finally:
            with contextlib.suppress(ProcessLookupError):  # the whole group: bwrap, strace, bash and its children
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        seen = trace.parse(log.read_text(errors="replace") if log.exists() else "", REPOSITORY)
        changed = any(w.path.startswith(SCRATCH + "/") and w.path not in _GIT_INDEX_REFRESH for w in seen.writes)
        self.dirty = timed_out or changed
        return judge(command, seen, timed_out, code)


def _named(run: trace.Exec, allowed: frozenset[str]) -> bool:
    """Is this exec a program the verdict names, or the interpreter of one (`#!/usr/bin/env node` in npm runs
    `node /usr/bin/npm`)?"""
    if os.path.basename(run.path) in allowed:
        return True
    script = run.argv[1] if len(run.argv) > 1 else ""
    return script.startswith("/") and os.path.basename(script) in allowed


def _forbidden_write(path: str) -> bool:
    inside = path + "/"
    return inside.startswith(_MAY_NOT_WRITE) or not inside.startswith(_MAY_WRITE)


def judge(command: str, seen: trace.Trace, timed_out: bool, code: int | None) -> Outcome:
    allowed = allowed_programs(command)
    tolerated = _GIT_INDEX_REFRESH if "git" in allowed else ()
    writes = tuple(w for w in seen.writes if _forbidden_write(w.path) and w.path not in tolerated)
    # One per program: execvp tries each directory of PATH, and only the last try (if any) runs it.
    foreign: dict[str, trace.Exec] = {}
    for run in seen.execs:
        if not _named(run, allowed):
            name = os.path.basename(run.path)
            if name not in foreign or foreign[name].result.startswith("-"):
                foreign[name] = run
    execs = tuple(foreign.values())
    return Outcome(command, classify(command).reason, writes, execs, timed_out, code)


@dataclass(frozen=True, slots=True)
class Report:
    drawn: int  # commands generated
    ran: int  # of them, called read-only and run
    outcomes: tuple[Outcome, ...]
    seconds: float

    @property
    def findings(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.is_finding]

    def summary(self) -> str:
        found = self.findings
        wrote = sum(1 for o in found if o.writes)
        ran_other = sum(1 for o in found if o.execs)
        timeouts = sum(1 for o in self.outcomes if o.timed_out)
        return (
            f"generated {self.drawn}, read-only and run {self.ran}, findings {len(found)} "
            f"(wrote a file: {wrote}, ran a program outside its table: {ran_other}), timed out {timeouts}, "
            f"{self.seconds:.1f} s"
        )


def read_only_commands(stream: Iterator[str], count: int) -> tuple[list[str], int]:
    """The first `count` distinct commands from `stream` that the classifier calls read-only, and how many were
    drawn to find them."""
    chosen: dict[str, None] = {}
    drawn = 0
    for command in stream:
        drawn += 1
        if command not in chosen and classify(command).read_only:
            chosen[command] = None
            if len(chosen) >= count:
                break
    return list(chosen), drawn


def run_all(commands: Sequence[str], *, workers: int = 2, deadline: float | None = None) -> Iterator[Outcome]:
    """Run the commands, `workers` at a time, each worker in its own copy of the fixture; yield the outcomes in
    order. No new command starts after `deadline` (time.monotonic())."""
    require_tools()
    with tempfile.TemporaryDirectory(prefix="toolgate-diff-") as root_name:
        root = Path(root_name)
        template = build_template(root)
        slots: queue.SimpleQueue[Slot] = queue.SimpleQueue()
        for index in range(workers):
            slots.put(Slot(template, root / f"slot-{index}"))

        def one(command: str) -> Outcome | None:
            if deadline is not None and time.monotonic() > deadline:
                return None
            slot = slots.get()
            try:
                return slot.run(command)
            finally:
                slots.put(slot)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for outcome in pool.map(one, commands):
                if outcome is not None:
                    yield outcome
