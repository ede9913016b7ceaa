"""The in-sandbox half of a resident sandbox (resident.py), run as `python3 -I -S -c RUNNER FD` as the sandbox's
command: it starts each Bash command the session sends over the control socket FD, inside the sandbox it
already is in, so a command costs a fork and an exec instead of a new sandbox.

Messages are JSON, one per SOCK_SEQPACKET packet. From the session, on the control socket FD: `{"argv", "cwd",
"env"}` with descriptors attached (SCM_RIGHTS): the command's report channel (a socket of its own), its stdout and
stderr, and its stdin (else it reads /dev/null). Back on the control socket: `{"ready": 1}` once. On the command's
channel: `{"started": 1}` once it has been exec'd, with a pidfd of it attached (the session reads its pid, in the
session's own numbering, from the pidfd), or `{"failed": 1, "reason"}` if it could not be started; then the
session's acknowledgement (any packet: it has the pid), after which `{"exit": 1, "status": wait-status}` once it
ended, and the channel is closed. The runner reaps a command only once the session has its pid: a pidfd of a
reaped process no longer tells it, and the session needs it to stop what the command left in its group.

Each command is started with posix_spawn (a vfork and an exec: no copy of this interpreter runs in between), as a
session and process group of its own, so the session stops it with its whole group as it stops an unsandboxed
one; the runner waits on its pidfd, not on SIGCHLD. Every descriptor the runner holds is close-on-exec, so
nothing of the runner's reaches a command. When the control socket closes (the session retired the sandbox, or
died), this process exits, and bubblewrap's init ends everything else in the sandbox (the channels close with it:
the session reads that as the sandbox's end).

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
import sys

_MAX_MESSAGE = 1 << 20
_PR_SET_DUMPABLE = 4
# Back to their defaults in a command, as a plain exec from a shell has them: Python ignores SIGPIPE and SIGXFSZ,
# the runner SIGINT, and an ignored signal stays ignored across an exec.
_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT)


class _Command:
    __slots__ = ("channel", "pid", "pidfd")  # (no dataclass: importing dataclasses would slow every start)

    def __init__(self, pid: int, pidfd: int, channel: socket.socket) -> None:
        self.pid = pid  # in the sandbox's numbering
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
        os.chdir(cwd)  # the runner's own: posix_spawn has no portable way to change it in the child alone
    except OSError as exc:
        raise OSError(f"it could not enter {cwd} inside the sandbox: {exc.strerror}") from None
    actions = [
        (os.POSIX_SPAWN_DUP2, fds[1], 1),
        (os.POSIX_SPAWN_DUP2, fds[2], 2),
        (os.POSIX_SPAWN_DUP2, fds[3] if len(fds) > 3 else devnull, 0),
    ]
    try:
        pid = os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True, setsigdef=_DEFAULT_SIGNALS)
    except OSError as exc:
        raise OSError(f"it could not run {argv[0]} inside the sandbox: {exc.strerror or exc}") from None
    try:
        pidfd = os.pidfd_open(pid)  # our unreaped child: the pid cannot name another process yet
    except OSError as exc:
        os.killpg(pid, signal.SIGKILL)  # it could not be watched, so it does not run on
        os.waitpid(pid, 0)
        raise OSError(f"it could not be watched inside the sandbox: {exc.strerror}") from None
    return _Command(pid, pidfd, socket.socket(fileno=fds[0]))


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
                except (OSError, ValueError) as exc:
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
            elif fd in running:  # it ended: reaped once the session has its pid (the packet may be there already)
                command = running.pop(fd)
                poller.unregister(fd)
                os.close(command.pidfd)
                ended[command.channel.fileno()] = command
                poller.register(command.channel, select.POLLIN)
            elif fd in ended:  # the session's acknowledgement, or its end
                command = ended.pop(fd)
                poller.unregister(fd)
                # Taken off the channel: one closed with a packet unread resets the session's end before it
                # could read the status (an error here: the session's end is gone, and wants no status).
                with contextlib.suppress(OSError):
                    command.channel.recv(16, socket.MSG_DONTWAIT)
                _, status = os.waitpid(command.pid, 0)
                _report(command.channel, {"exit": 1, "status": status})
                command.channel.close()


def main(argv: list[str]) -> None:
    _undumpable()
    control = socket.socket(fileno=int(argv[0]))
    os.set_inheritable(control.fileno(), False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _serve(control)


if __name__ == "__main__":
    main(sys.argv[1:])
