"""A resident sandbox: one bubblewrap sandbox that many Bash commands run in, one after another or side by side.

Starting a sandbox per command costs several times the command itself (namespaces, ~40 mounts, the stand-ins);
so the session keeps one running for as long as its policy holds (runtime.py replaces it when the policy or the
file system facts the plan depends on change) and starts each command inside through the in-sandbox runner
(runner.py) over a socket: a fork and an exec, as outside.

The session still owns each command as it owns an unsandboxed one: the command is a process group of its own
(its pid in the session's numbering is read from the pidfd that comes with its first message), so the
executor's timeout, cancellation, leftover stop and the watchdog work on it unchanged; its output goes to a pipe
or file the session made. What is lost is only what a command left running in a session of its own (setsid): it
lives until the sandbox retires (idle for IDLE_S, replaced, or the session ended), and dies with it, as
bubblewrap's init ends everything inside when the runner exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from toolgate.core.errors import StateError
from toolgate.shell.pipes import PipeReader
from toolgate.shell.watchdog import WATCHDOG

_RUNNER = Path(__file__).with_name("runner.py")
_READY_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 5.0
_FD = struct.Struct("i")
_ACKNOWLEDGE = b"1"  # to the runner: the pid is read, the command may be reaped once it ended


class Refused(OSError):
    """The runner could not start the command in a sandbox that still runs (a directory or program it does not
    show, no pidfd): calling again in the same sandbox fails the same way."""


class ResidentProcess:
    """A command running in a resident sandbox: the parts of `subprocess.Popen` the shell host uses, and (through
    `AsyncResidentProcess`) those of an anyio process the executor uses.

    The runner reports on it over a socket of its own (`channel`): `{"started"}` with a pidfd of the command (its
    pid, in this process's numbering, is read from it), or `{"failed"}`; then, once this side acknowledged the pid,
    `{"exit", "code"}`; the channel closing before that means the sandbox stopped. A foreground command's
    channel is read by the event loop itself, a background one's by a thread of its own: no hop through a shared
    reader thread and a worker thread on the way, which cost about as much as the command.
    """

    def __init__(self, lease: Lease, channel: socket.socket) -> None:
        self._pid: int | None = None
        self.returncode: int | None = None
        self.failure: str | None = None
        self._refused = False  # the failure is the runner's answer, not the sandbox's end
        self._exited = threading.Event()
        self._lease = lease
        self._channel: socket.socket | None = channel

    @property
    def pid(self) -> int:
        assert self._pid is not None
        return self._pid

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired("sandboxed command", timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if self._pid is not None and self.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._pid, signal.SIGKILL)

    # --- the runner's reports, read by one reader at a time: the caller, the event loop, or `_watch` -----------
    def _started_or_raise(self) -> None:
        if self._pid is None:
            raise (Refused if self._refused else OSError)(self.failure or "the sandbox could not start the command")

    def _await_start(self) -> None:
        while self._pid is None and not self._exited.is_set():
            self._receive()
        self._started_or_raise()

    async def _await_start_async(self) -> None:
        while self._pid is None and not self._exited.is_set():
            await self._receive_async()
        self._started_or_raise()

    async def _receive_async(self) -> None:
        assert self._channel is not None
        self._channel.setblocking(False)
        while not self._receive():
            await anyio.wait_readable(self._channel)

    def _watch(self) -> None:
        """Read the reports (blocking) until the command ended: for a command whose owner does not wait on it in an
        event loop."""
        assert self._channel is not None
        self._channel.setblocking(True)
        while not self._exited.is_set():
            self._receive()

    def _receive(self) -> bool:
        """Take the next report; False if the channel is non-blocking and none is there yet."""
        assert self._channel is not None
        try:
            data, ancillary, _, _ = self._channel.recvmsg(4096, socket.CMSG_SPACE(_FD.size), socket.MSG_CMSG_CLOEXEC)
        except BlockingIOError:
            return False
        except OSError:
            data, ancillary = b"", []
        pidfds = [
            fd
            for level, kind, d in ancillary
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
            for (fd,) in _FD.iter_unpack(d[: len(d) - len(d) % _FD.size])
        ]
        if not data:  # the runner is gone, and every command inside with it
            self._exit(-signal.SIGKILL, "the sandbox stopped")
            return True
        try:
            self._take(json.loads(data), pidfds[0] if pidfds else None)
        except (ValueError, TypeError, KeyError, AttributeError):
            # Not what the runner sends: whatever sent it, this sandbox is no longer trusted to run more.
            self._lease.resident.retired = True
            self.kill()
            self._exit(-signal.SIGKILL, "the sandbox sent something unexpected")
        finally:
            for fd in pidfds:
                os.close(fd)
        return True

    def _take(self, message: dict[str, object], pidfd: int | None) -> None:
        if "started" in message and self._pid is None:
            pid = None if pidfd is None else pid_of(pidfd)
            if pid is None:  # unwatchable: it must not run on (it could have started others: the sandbox ends)
                if pidfd is not None:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                self._lease.resident.retired = True
                self._refused = True
                self._exit(-signal.SIGKILL, "its process id could not be read from /proc")
                return
            self._pid = pid
            assert self._channel is not None
            with contextlib.suppress(OSError):  # the runner gone: its end shows up as the channel's end
                self._channel.send(_ACKNOWLEDGE)
        elif "failed" in message:
            self._refused = True
            self._exit(-signal.SIGKILL, str(message.get("reason", "")))
        elif "exit" in message:
            code = message["code"]
            if not isinstance(code, int):
                raise TypeError("the exit code is not a number")
            self._exit(code)
        else:
            raise KeyError("not a report the runner sends")

    def _exit(self, returncode: int, failure: str | None = None) -> None:
        if self._exited.is_set():
            return
        self.returncode, self.failure = returncode, failure
        self._exited.set()
        if self._channel is not None:  # only its reader gets here, so no one is waiting on it
            self._channel.close()
            self._channel = None
        self._lease.release()


class Lease:
    """A command's hold on a resident sandbox: it is not retired while any lease is held."""

    def __init__(self, resident: Resident) -> None:
        self.resident = resident
        self._held = True

    def release(self) -> None:
        self.resident._release(self)


class AsyncResidentProcess:
    """What `executor.run_command` needs of a process, for one in a resident sandbox."""

    def __init__(self, process: ResidentProcess, stdout: PipeReader) -> None:
        self.process = process
        self.stdout = stdout

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def wait(self) -> int:
        while self.process.returncode is None:
            await self.process._receive_async()
        return self.process.returncode

    async def aclose(self) -> None:
        self.stdout.close()
        if self.process.returncode is None:  # not waited for: its lease is let go when it ends
            threading.Thread(target=self.process._watch, name="toolgate-sandbox-command", daemon=True).start()


class Resident:
    """One running sandbox (`argv`: bubblewrap and its options up to `--`), until `retire`."""

    def __init__(self, argv: Sequence[str], python: str) -> None:
        self.argv = tuple(argv)
        self._lock = threading.Lock()
        self._leases = 0
        self.retired = False  # no new command starts in it
        self._ending = False  # someone is ending it
        self._on_idle: Callable[[Resident], None] | None = None
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - bubblewrap writes to it until retire closes it
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._control = ours
        runner = (python, "-I", "-S", "-c", _RUNNER.read_text(encoding="utf-8"), str(theirs.fileno()))
        try:
            self._bwrap = subprocess.Popen(
                [*self.argv, *runner],
                # Nothing of this process's environment (its secrets): every process inside could read the
                # runner's from /proc. Each command gets its own, scrubbed, with its request.
                env={},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._errors,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError:
            ours.close()
            self._errors.close()
            raise
        finally:
            theirs.close()
        WATCHDOG.track(self._bwrap.pid)
        try:
            self._await_ready()
        except OSError:
            self.retire()
            raise
        threading.Thread(target=self._watch_runner, name="toolgate-sandbox-runner", daemon=True).start()

    def _await_ready(self) -> None:
        self._control.settimeout(_READY_TIMEOUT_S)
        try:
            message = self._control.recv(4096)
        except TimeoutError:
            message = b""
        self._control.settimeout(None)
        if message != b'{"ready": 1}':
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._bwrap.wait(_STOP_TIMEOUT_S)
            self._errors.seek(0)
            why = self._errors.read().decode("utf-8", "replace").strip()
            raise OSError(why or f"bubblewrap ended with exit status {self._bwrap.poll()} before the sandbox ran")

    # --- leases: the commands that will run, or run, in it ------------------------------------------------------
    def lease(self) -> Lease | None:
        """A hold on this sandbox for one command; None once it is retired."""
        with self._lock:
            if self.retired:
                return None
            self._leases += 1
            return Lease(self)

    def _release(self, lease: Lease) -> None:
        with self._lock:
            if not lease._held:
                return
            lease._held = False
            self._leases -= 1
            idle = self._leases == 0
        if idle and self._on_idle is not None:
            self._on_idle(self)

    def retire_if_idle(self) -> bool:
        """Claim ending it if no command holds it (then `retire` it); False if one does, or it is claimed."""
        with self._lock:
            if self._leases or self._ending:
                return False
            self._ending = self.retired = True  # retired already, if the runner stopped by itself
            return True

    def when_idle(self, callback: Callable[[Resident], None]) -> None:
        self._on_idle = callback

    # --- commands ----------------------------------------------------------------------------------------------
    def send(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output: int,
        lease: Lease,
        errors: int | None = None,
        stdin: int | None = None,
    ) -> ResidentProcess:
        """Ask the runner to start `argv` inside, writing its stdout (and stderr, unless `errors` is given) to the
        descriptor `output`; stdin is empty unless given. The lease passes to the process (released when it ended).
        The process has started once its `_await_start` returned. OSError when the sandbox is gone."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            request = json.dumps({"argv": list(argv), "cwd": str(cwd), "env": dict(env)})
            if self.retired:
                raise OSError("the sandbox has stopped")
            fds = [theirs.fileno(), output, output if errors is None else errors, *(() if stdin is None else (stdin,))]
            socket.send_fds(self._control, [request.encode("utf-8", "surrogateescape")], fds)
        except OSError:
            ours.close()
            raise
        finally:
            theirs.close()  # the runner has its copy: the channel closes when the runner is gone
        return ResidentProcess(lease, ours)

    def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output: int,
        lease: Lease,
        errors: int | None = None,
        stdin: int | None = None,
    ) -> ResidentProcess:
        """`send`, and wait until it started; a thread of its own then waits for its end."""
        process = self.send(argv, cwd=cwd, env=env, output=output, lease=lease, errors=errors, stdin=stdin)
        process._await_start()
        threading.Thread(target=process._watch, name="toolgate-sandbox-command", daemon=True).start()
        return process

    def _watch_runner(self) -> None:
        """The runner sends nothing after it is ready: the control socket ends when it is gone (and every command
        inside with it); anything else means it misbehaved, and the sandbox is no longer trusted to run more."""
        with contextlib.suppress(OSError):
            self._control.recv(1)
        with self._lock:
            self.retired = True

    def retire(self) -> None:
        """Stop the sandbox and everything in it, and wait until it is gone (its mounts with it)."""
        with self._lock:
            self.retired = True
        with contextlib.suppress(OSError):
            self._control.shutdown(socket.SHUT_RDWR)
        try:
            self._bwrap.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._bwrap.pid, signal.SIGKILL)
            self._bwrap.wait()
        WATCHDOG.forget(self._bwrap.pid)
        self._control.close()
        self._errors.close()


async def open_process(lease: Lease, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> AsyncResidentProcess:
    """Start a foreground command in the lease's sandbox, its output (stdout and stderr) in a pipe."""
    read, write = os.pipe()
    try:
        process = lease.resident.send(argv, cwd=cwd, env=env, output=write, lease=lease)
    except OSError as exc:
        os.close(read)
        raise _not_started(exc, BASH_ADVICE) from None
    finally:
        os.close(write)
    try:
        # Shielded: a fork away, and a command cancelled before its pid arrived would run on unwatched.
        with anyio.CancelScope(shield=True):
            await process._await_start_async()
    except OSError as exc:
        os.close(read)
        raise _not_started(exc, BASH_ADVICE) from None
    return AsyncResidentProcess(process, PipeReader(read))


def pid_of(pidfd: int) -> int | None:
    """The pid of the process a pidfd refers to, in this process's numbering (None if it was reaped already)."""
    try:
        fd = os.open(f"/proc/self/fdinfo/{pidfd}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    for line in info.splitlines():
        if line.startswith(b"Pid:"):
            pid = int(line[4:])
            return pid if pid > 0 else None
    return None


@dataclass(frozen=True)
class NotStartedAdvice:
    """What the one who asked for a command can do when the sandbox does not start it, in that caller's terms."""

    refused: str  # the sandbox runs but refuses this command (`Refused`): asking again fails the same way
    stopped: str  # the sandbox could not start it otherwise (it stopped): the next start gets a new one


# The model's Bash call, which may ask to run outside the sandbox (the person is asked then).
BASH_ADVICE = NotStartedAdvice(
    refused="If the sandbox is what keeps it from running, call it again with outside_sandbox: true and the user "
    "will be asked.",
    stopped="Call it again: the next call starts a new sandbox if this one stopped.",
)


def _not_started(exc: OSError, advice: NotStartedAdvice) -> StateError:
    if isinstance(exc, Refused):
        return StateError(f"The sandbox could not start the command: {exc}. It did not run. {advice.refused}")
    return StateError(f"The sandbox could not start the command ({exc}), so it did not run. {advice.stopped}")


def start_background(
    lease: Lease,
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    output: int,
    errors: int | None = None,
    stdin: int | None = None,
    advice: NotStartedAdvice = BASH_ADVICE,
) -> ResidentProcess:
    """Start a command in the lease's sandbox without waiting for it, its output going to the descriptor `output`
    (and `errors`, when given); stdin empty unless given. A command it cannot start is a StateError that ends with
    `advice` (a Bash call's unless given)."""
    try:
        return lease.resident.spawn(argv, cwd=cwd, env=env, output=output, lease=lease, errors=errors, stdin=stdin)
    except OSError as exc:
        raise _not_started(exc, advice) from None
