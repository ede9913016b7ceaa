"""The in-sandbox half of the egress path, run as `python3 -I -S forwarder.py SOCKET PORT -- COMMAND...` in front
of each networked command: it listens on 127.0.0.1:PORT in the sandbox's network namespace (another free port
when a command running beside it holds PORT; the proxy variables then name that one), forks a relay that carries
each connection to the proxy's unix SOCKET, and then becomes COMMAND (exec), so the command keeps its process,
exit status and signals. The relay ends the moment COMMAND does (a parent-death signal), so it is never left
behind in the command's process group.

Standard library only, and no toolgate import: it runs under whichever python3 the sandbox can see, in
isolated mode. `runtime.py` passes this file's text with `-c`.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
_PR_SET_PDEATHSIG = 1


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            chunk = source.recv(65536)
            if not chunk:
                break
            target.sendall(chunk)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _end_with(parent: int) -> None:
    """Be killed when `parent` (the command, once it has exec'd) ends."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (ImportError, OSError, AttributeError):
        pass  # without it, the executor stops the relay with the command's group
    if os.getppid() != parent:  # it ended before the signal was asked for
        os._exit(0)


def _serve(listener: socket.socket, path: str) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the command's output ends when the command does, not when the relay does
        os.dup2(null, fd)
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> None:
    path, port, separator, *command = argv
    if separator != "--" or not command:
        sys.exit("usage: forwarder SOCKET PORT -- COMMAND...")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", int(port)))
    except OSError:
        listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    parent = os.getpid()
    if os.fork() == 0:
        try:
            _end_with(parent)
            _serve(listener, path)
        finally:
            os._exit(0)
    listener.close()
    env = dict(os.environ, **dict.fromkeys(_PROXY_VARIABLES, url))
    os.execvpe(command[0], command, env)


if __name__ == "__main__":
    main(sys.argv[1:])
