"""The in-sandbox half of a resident sandbox (resident.py), run as `python3 -I -S -c RUNNER FD` as the sandbox's
command: it starts each Bash command the session sends over the control socket FD, inside the sandbox it
already is in, so a command costs a fork and an exec instead of a new sandbox.

Messages are JSON, one per SOCK_SEQPACKET packet. From the session: `{"id", "argv", "cwd", "env"}` with the
command's stdout and stderr descriptors attached (SCM_RIGHTS), and its stdin (else it reads /dev/null). Back:
`{"ready": 1}` once, `{"started": id}` sent by the new process itself (the session reads its pid, in the
session's own numbering, from the credentials the kernel attaches), and `{"exit": id, "status": wait-status}`
once it ended. Each command is a session and process group of its own, so the session stops it with its whole
group as it stops an unsandboxed one. When the control socket closes (the session retired the sandbox, or
died), this process exits, and bubblewrap's init ends everything else in the sandbox.

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


def _start(control: socket.socket, request: dict[str, object], fds: list[int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 127
    try:
        os.setsid()
        control.send(json.dumps({"started": request["id"]}).encode())
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGINT):  # as a plain exec has them
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        stdin = fds[2] if len(fds) > 2 else os.open(os.devnull, os.O_RDONLY)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
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


def _reap(control: socket.socket, children: dict[int, object]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        command = children.pop(pid, None)
        if command is not None:
            control.send(json.dumps({"exit": command, "status": status}).encode())


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
    children: dict[int, object] = {}
    control.send(b'{"ready": 1}')
    while True:
        readable, _, _ = select.select([control.fileno(), wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
            _reap(control, children)
        if control.fileno() not in readable:
            continue
        fds = array.array("i")
        message, ancillary, _, _ = control.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(4 * fds.itemsize))
        if not message:
            return  # the session is done with this sandbox
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
        try:
            request = json.loads(message)
            children[_start(control, request, list(fds))] = request["id"]
        except OSError as exc:  # fork failed (a process limit)
            control.send(json.dumps({"failed": request["id"], "reason": str(exc)}).encode())
        finally:
            for fd in fds:
                os.close(fd)
        _reap(control, children)


if __name__ == "__main__":
    main(sys.argv[1:])
