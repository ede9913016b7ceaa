"""`toolgate protocol schema|typescript`: the wire protocol as JSON Schema, and the extension's types from it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from toolgate.cli.errors import UsageError
from toolgate.sidecar.protocol_schema import protocol_schema
from toolgate.sidecar.tsgen import typescript_from_schema


def protocol_command(args: argparse.Namespace) -> int:
    schema = protocol_schema()
    if args.what == "schema":
        sys.stdout.write(json.dumps(schema, indent=2) + "\n")
        return 0
    source = typescript_from_schema(schema)
    out: Path | None = args.out
    if out is None:
        sys.stdout.write(source)
        return 0
    if args.check:
        current = out.read_text(encoding="utf-8") if out.is_file() else None
        if current != source:
            raise UsageError(f"{out} is out of date with the protocol models; run `make protocol`")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(source, encoding="utf-8")
    return 0
