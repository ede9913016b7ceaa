"""`python -m toolgate.mockmodel --script FILE [--port N] [--record FILE]`: serve a script until stopped.

Prints `listening on http://127.0.0.1:PORT` on stdout once ready (so a caller can wait for it and learn the
port when it asked for port 0). `--record` appends one JSON line per request.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from toolgate.mockmodel.script import load_script
from toolgate.mockmodel.server import MockModelServer, RecordedRequest


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolgate.mockmodel", description=__doc__)
    parser.add_argument("--script", type=Path, required=True, help="JSON script: {'steps': [...]} or a list")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument("--record", type=Path, default=None, help="append each request as a JSON line here")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script)
    except (OSError, ValueError) as exc:
        print(f"mockmodel: cannot use the script {args.script}: {exc}", file=sys.stderr)
        return 2

    lock = threading.Lock()

    def record(request: RecordedRequest) -> None:
        if args.record is None:
            return
        with lock, args.record.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(request.summary(), ensure_ascii=False) + "\n")

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with MockModelServer(script, port=args.port, on_record=record) as mock:
        print(f"listening on {mock.url}", flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
