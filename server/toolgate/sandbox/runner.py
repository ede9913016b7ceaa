"""The in-sandbox half of a resident sandbox (resident.py), run as `python3 -I -S -c RUNNER FD` as the sandbox's
command: it starts each Bash command the session sends over the control socket FD, inside the sandbox it
already is in, so a command costs a fork and an exec instead of a new sandbox.

Messages are JSON, one per SOCK_SEQPACKET packet. From the session, on the control socket FD: `{"argv", "cwd",
"env"}` with descriptors attached (SCM_RIGHTS): the command's report channel (a socket of its own), its stdout and
stderr, and its stdin (else it reads /dev/null). Back on the control socket: `{"ready": 1}` once. On the command's
channel: `{"started": 1}` sent by the new process itself (the session reads its pid, in the session's own
numbering, from the credentials the kernel attaches), then `{"exit": 1, "status": wait-status}` once it ended (or
`{"failed": 1, "reason"}` if it could not be started), and the channel is closed. Each command is a session and
process group of its own, so the session stops it with its whole group as it stops an unsandboxed one. When the
control socket closes (the session retired the sandbox, or died), this process exits, and bubblewrap's init ends
everything else in the sandbox (the channels close with it: the session reads that as the sandbox's end).

Standard library only, and no toolgate import: it runs under whichever python3 the sandbox can see, in isolated
mode. `resident.py` passes this file's text with `-c`.
"""

from __future__ import annotations

import array
import json
import os
import select
import signal
import socket
import sys

_MAX_MESSAGE = 1 << 20
_PR_SET_DUMPABLE = 4


def _start(request: dict[str, object], fds: list[int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 127
    try:
        os.setsid()
        os.write(fds[0], b'{"started": 1}')
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGINT):  # as a plain exec has them
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        stdin = fds[3] if len(fds) > 3 else os.open(os.devnull, os.O_RDONLY)
        os.dup2(fds[1], 1)
        os.dup2(fds[2], 2)
        os.dup2(stdin, 0)
        os.closerange(3, 1 << 16)  # nothing of the runner's reaches the command
        cwd, argv, env = str(request["cwd"]), request["argv"], request["env"]
        assert isinstance(argv, list) and isinstance(env, dict)
        try:
            os.chdir(cwd)
        except OSError as exc:
            code = 126
            os.write(2, f"toolgate's sandbox could not enter {cwd}: {exc.strerror}\n".encode())
            raise
        os.execve(argv[0], argv, env)
    except BaseException as exc:  # the child must never return into the runner's loop
        if code == 127:
            os.write(2, f"toolgate's sandbox could not start the command: {exc}\n".encode())
    finally:
        os._exit(code)


def _report(channel: int, message: dict[str, object]) -> None:
    """The last word on a command, on its channel; then the channel is closed (the session may have gone)."""
    try:
        os.write(channel, json.dumps(message).encode())
    except OSError:
        pass
    finally:
        os.close(channel)


def _reap(channels: dict[int, int]) -> None:
    while channels:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        channel = channels.pop(pid, None)
        if channel is not None:
            _report(channel, {"exit": 1, "status": status})


def _undumpable() -> None:
    """No command can ptrace this process or read its /proc files (and so reach the control socket); a command
    it starts is dumpable again from its exec on, as usual."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass


def main(argv: list[str]) -> None:
    _undumpable()
    control = socket.socket(fileno=int(argv[0]))
    os.set_inheritable(control.fileno(), False)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler (not the default) makes SIGCHLD wake the loop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channels: dict[int, int] = {}  # a running command's pid here -> its report channel
    control.send(b'{"ready": 1}')
    while True:
        readable, _, _ = select.select([control.fileno(), wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
            _reap(channels)
        if control.fileno() not in readable:
            continue
        fds = array.array("i")
        message, ancillary, _, _ = control.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(4 * fds.itemsize))
        if not message:
            return  # the session is done with this sandbox
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        channel, *streams = fds
        try:
            channels[_start(json.loads(message), list(fds))] = channel
        except OSError as exc:  # fork failed (a process limit)
            _report(channel, {"failed": 1, "reason": str(exc)})
        finally:
            for fd in streams:
                os.close(fd)
        _reap(channels)


if __name__ == "__main__":
    main(sys.argv[1:])
