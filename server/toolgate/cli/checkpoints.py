"""`toolgate checkpoints list|gc` and `toolgate rewind`: a script's way back, from the session id alone."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.restore import restore
from toolgate.checkpoints.store import CheckpointStore
from toolgate.session_files import default_data_root


def _data_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="where sessions live (default: $XDG_DATA_HOME/toolgate)"
    )


def add_checkpoint_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = commands.add_parser(
        "checkpoints",
        help="list a session's checkpoints, or gc the store",
        description="Checkpoints are taken at each turn start and before each call that may change files.",
    )
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser(
        "list",
        help="one JSON line per checkpoint: id, turn, tool_use_id, time, changed files, skipped files",
    )
    listing.add_argument("--session", required=True, metavar="ID", help="the session id")
    _data_option(listing)
    gc = actions.add_parser("gc", help="apply retention and the size cap, and free unused space")
    gc.add_argument("--session", required=True, metavar="ID", help="a session of the workspace whose store to gc")
    _data_option(gc)

    rewind = commands.add_parser(
        "rewind",
        help="restore a session's files to a checkpoint (a redo checkpoint is taken first)",
        description="Files changed since the checkpoint get their old bytes and mode back, files created since "
        "are removed, deleted ones return. Prints what it did; exit 1 with the reason when it cannot.",
    )
    rewind.add_argument("--session", required=True, metavar="ID", help="the session id")
    rewind.add_argument("--to", required=True, metavar="CHECKPOINT", help="the checkpoint id (see checkpoints list)")
    what = rewind.add_mutually_exclusive_group()
    what.add_argument("--code", dest="what", action="store_const", const="code", help="files only (default)")
    what.add_argument("--conversation", dest="what", action="store_const", const="conversation")
    what.add_argument("--both", dest="what", action="store_const", const="both")
    rewind.add_argument("--dry-run", action="store_true", help="print the files and a diff; change nothing")
    _data_option(rewind)


def _print(obj: object) -> None:
    # ensure_ascii: a path that is not UTF-8 is kept as a \udcXX escape instead of failing to print.
    sys.stdout.write(json.dumps(obj) + "\n")


def _store(args: argparse.Namespace) -> CheckpointStore:
    root = args.data_dir.expanduser().resolve() if args.data_dir else default_data_root()
    return CheckpointStore.for_session(root, args.session)


def checkpoints_command(args: argparse.Namespace) -> int:
    try:
        store = _store(args)
        if args.action == "gc":
            _print(store.gc())
            return 0
        for checkpoint in store.checkpoints(args.session):
            _print(checkpoint.summary())
    except CheckpointError as exc:
        print(f"toolgate checkpoints {args.action}: {exc}", file=sys.stderr)
        return 1
    return 0


def rewind_command(args: argparse.Namespace) -> int:
    what = args.what or "code"
    if what != "code":
        print(
            f"toolgate rewind: --{what} is not available yet: only files can be rewound (--code); "
            "the conversation stays as it is",
            file=sys.stderr,
        )
        return 1
    try:
        store = _store(args)
        turn = max((c.turn for c in store.checkpoints(args.session)), default=0)
        report = restore(store, args.session, args.to, turn=turn, dry_run=args.dry_run)
    except CheckpointError as exc:
        print(f"toolgate rewind: {exc}", file=sys.stderr)
        return 1
    verb = "would restore" if report.dry_run else "restored"
    print(f"{verb} {len(report.changes)} file(s) to checkpoint {report.target}")
    for change in report.changes:
        print(f"  {change.action:6} {change.path}")
    if report.dry_run:
        sys.stdout.write(report.diff)
    elif report.redo is not None:
        print(f"undo this with: toolgate rewind --session {args.session} --to {report.redo}")
    return 0
