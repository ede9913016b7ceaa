"""The in-sandbox half of a resident sandbox (resident.py), run as `python3 -I -S -c RUNNER FD` as the sandbox's
command: it starts each Bash command the session sends over the control socket FD, inside the sandbox it
already is in, so a command costs a fork and an exec instead of a new sandbox.

Messages are JSON, one per SOCK_SEQPACKET packet. From the session, on the control socket FD: `{"argv", "cwd",
"env"}` with descriptors attached (SCM_RIGHTS): the command's report channel (a socket of its own), its stdout and
stderr, and its stdin (else it reads /dev/null). Back on the control socket: `{"ready": 1}` once. On the command's
channel: `{"started": 1}` once it has been exec'd, with a pidfd of it attached (the session reads its pid, in the
session's own numbering, from the pidfd), or `{"failed": 1, "reason"}` if it could not be started; then the
session's acknowledgement (any packet: it has the pid), after which `{"exit": 1, "code": returncode}` once it
ended (negative: the signal that ended it), and the channel is closed. The runner reaps a command only once the
session has its pid: a pidfd of a reaped process no longer tells it, and the session needs it to stop what the
command left in its group.

Each command is started as an unsandboxed one is, by `subprocess.Popen` (a vfork and an exec in C: no copy of
this interpreter runs in between), with what a plain exec has (default signals, no descriptor but 0-2), as a
session and process group of its own, so the session stops it with its whole group as it stops an unsandboxed
one. (Not os.posix_spawn: glibc's leaves its two internal signals ignored in every command.) The runner waits on
its pidfd, not on SIGCHLD, and every descriptor it holds is close-on-exec besides. When the control socket closes
(the session retired the sandbox, or died), this process exits, and bubblewrap's init ends everything else in the
sandbox (the channels close with it: the session reads that as the sandbox's end).

Standard library only, and no toolgate import: it runs under whichever python3 the sandbox can see, in isolated
mode. `resident.py` passes this file's text with `-c`.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys

_MAX_MESSAGE = 1 << 20
_PR_SET_DUMPABLE = 4


class _Command:
    __slots__ = ("channel", "pidfd", "process")  # (no dataclass: importing dataclasses would slow every start)

    def __init__(self, process: subprocess.Popen[bytes], pidfd: int, channel: socket.socket) -> None:
        # Held until reaped by its `wait`: a Popen dropped unwaited is polled (and reaped) by the next one's start.
        self.process = process
        self.pidfd = pidfd
        self.channel = channel  # its report channel


def _report(channel: socket.socket, message: dict[str, object], fds: tuple[int, ...] = ()) -> None:
    with contextlib.suppress(OSError):  # else the session has gone: it stops (or stopped) the command's group
        socket.send_fds(channel, [json.dumps(message).encode()], fds)


def _start(request: object, fds: list[int], devnull: int) -> _Command:
    """Start the command; OSError with the reason it could not be."""
    if not isinstance(request, dict) or len(fds) < 3:
        raise OSError("the request is not one toolgate sends")
    cwd, argv, env = request.get("cwd"), request.get("argv"), request.get("env")
    if not isinstance(cwd, str) or not isinstance(argv, list) or not argv or not isinstance(env, dict):
        raise OSError("the request is not one toolgate sends")
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=fds[3] if len(fds) > 3 else devnull,
            stdout=fds[1],
            stderr=fds[2],
            start_new_session=True,  # and the defaults: SIGPIPE and SIGXFSZ restored, descriptors from 3 closed
        )
    except OSError as exc:
        if exc.filename == cwd:
            raise OSError(f"it could not enter {cwd} inside the sandbox: {exc.strerror}") from None
        raise OSError(f"it could not run {argv[0]} inside the sandbox: {exc.strerror or exc}") from None
    try:
        pidfd = os.pidfd_open(process.pid)  # our unreaped child: the pid cannot name another process yet
    except OSError as exc:
        os.killpg(process.pid, signal.SIGKILL)  # it could not be watched, so it does not run on
        process.wait()
        raise OSError(f"it could not be watched inside the sandbox: {exc.strerror}") from None
    return _Command(process, pidfd, socket.socket(fileno=fds[0]))


def _undumpable() -> None:
    """No command can ptrace this process or read its /proc files (and so reach the control socket); a command
    it starts is dumpable again from its exec on, as usual."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass


def _receive(control: socket.socket) -> tuple[bytes, list[int]]:
    """A request and its descriptors (close-on-exec: none of them may reach another command)."""
    fds = array.array("i")
    message, ancillary, _, _ = control.recvmsg(
        _MAX_MESSAGE, socket.CMSG_SPACE(4 * fds.itemsize), socket.MSG_CMSG_CLOEXEC
    )
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return message, list(fds)


def _serve(control: socket.socket) -> None:
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    poller = select.poll()
    poller.register(control, select.POLLIN)
    running: dict[int, _Command] = {}  # by pidfd
    ended: dict[int, _Command] = {}  # by channel: not reaped until the session acknowledged its pid
    control.send(b'{"ready": 1}')
    while True:
        for fd, _events in poller.poll():
            if fd == control.fileno():
                message, fds = _receive(control)
                if not message:
                    return  # the session is done with this sandbox
                try:
                    command = _start(json.loads(message), fds, devnull)
                except (OSError, ValueError, TypeError) as exc:  # not started; the next request is served
                    if fds:
                        with socket.socket(fileno=fds[0]) as channel:
                            _report(channel, {"failed": 1, "reason": str(exc)})
                else:
                    running[command.pidfd] = command
                    poller.register(command.pidfd, select.POLLIN)
                    _report(command.channel, {"started": 1}, (command.pidfd,))
                finally:
                    for stream in fds[1:]:
                        os.close(stream)
            elif fd in running:  # it ended: reaped once the session has its pid (usually read while it ran)
                command = running.pop(fd)
                poller.unregister(fd)
                os.close(command.pidfd)
                if _acknowledged(command.channel):
                    _finish(command)
                else:
                    ended[command.channel.fileno()] = command
                    poller.register(command.channel, select.POLLIN)
            elif fd in ended:  # the session's acknowledgement, or its end
                command = ended.pop(fd)
                poller.unregister(fd)
                _acknowledged(command.channel)
                _finish(command)


def _acknowledged(channel: socket.socket) -> bool:
    """Whether the session has the command's pid (or is gone), taking its acknowledgement off the channel: one
    closed with a packet unread resets the session's end before it could read the exit code."""
    try:
        channel.recv(16, socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        pass  # the session's end is gone, and wants no exit code
    return True


def _finish(command: _Command) -> None:
    _report(command.channel, {"exit": 1, "code": command.process.wait()})
    command.channel.close()


def _unable() -> str | None:
    """Why commands cannot be started and watched here (None: they can)."""
    if not hasattr(os, "pidfd_open"):
        return f"its python3 ({sys.version.split()[0]}) has no os.pidfd_open (Python 3.9 has it)"
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError as exc:
        return f"this kernel has no pidfds ({exc.strerror}; Linux 5.3 has them)"
    return None


def main(argv: list[str]) -> None:
    why = _unable()
    if why is not None:  # the session reads this (bubblewrap's stderr) as the reason the sandbox did not start
        sys.stderr.write(f"toolgate's sandbox cannot start commands: {why}\n")
        sys.exit(1)
    _undumpable()
    control = socket.socket(fileno=int(argv[0]))
    os.set_inheritable(control.fileno(), False)
    # Handled, not ignored: a command would inherit an ignored SIGINT (a handled one is reset by the exec). Unless
    # the session was started with it ignored (`nohup cmd &` ignores it): a plain command inherits that, so ours do.
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, lambda *_: None)
    # Whatever it inherited: an ignored SIGCHLD would reap each command at its end, before the session had its pid.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _serve(control)


if __name__ == "__main__":
    main(sys.argv[1:])
