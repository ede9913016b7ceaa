"""The in-sandbox half of the egress path, run as `python3 -I -S forwarder.py SOCKET PORT -- COMMAND...` as the
sandbox's first process: it listens on 127.0.0.1:PORT in the sandbox's network namespace, forks a relay that
carries each connection to the proxy's unix SOCKET, and then becomes COMMAND (exec), so the command keeps its
process, exit status and signals. The relay dies with the sandbox: bubblewrap's init ends everything in its
process namespace when COMMAND ends.

Standard library only, and no toolgate import: it runs under whichever python3 the sandbox can see, in
isolated mode. `runtime.py` passes this file's text with `-c`.
"""

from __future__ import annotations

import os
import socket
import sys
import threading


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
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(128)
    if os.fork() == 0:
        try:
            _serve(listener, path)
        finally:
            os._exit(0)
    listener.close()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
