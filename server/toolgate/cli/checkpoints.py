"""`toolgate checkpoints list|gc` and `toolgate rewind`: a script's way back, from the session id alone."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

# The parser below is built for every command, `toolgate serve` too: the store and its git driver are imported
# only by the commands that use them.
if TYPE_CHECKING:
    from toolgate.checkpoints.models import RestoreReport, RestoreWhat
    from toolgate.checkpoints.store import CheckpointStore


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
        help="undo the agent's changes and/or the conversation since a checkpoint (a redo checkpoint is taken first)",
        description="What the agent's tool calls changed since the checkpoint is undone; what the person changed "
        "is kept. A file the person changed on the same lines is left as it is and listed (exit 1). With "
        "--whole-tree, every file gets its bytes and mode at the checkpoint back instead. Prints what it did; "
        "exit 1 with the reason when it cannot.",
    )
    rewind.add_argument("--session", required=True, metavar="ID", help="the session id")
    rewind.add_argument("--to", required=True, metavar="CHECKPOINT", help="the checkpoint id (see checkpoints list)")
    what = rewind.add_mutually_exclusive_group()
    what.add_argument("--code", dest="what", action="store_const", const="code", help="files only (default)")
    what.add_argument(
        "--conversation",
        dest="what",
        action="store_const",
        const="conversation",
        help="cut the transcript back to before that checkpoint's user message; files untouched",
    )
    what.add_argument("--both", dest="what", action="store_const", const="both", help="files and conversation")
    rewind.add_argument(
        "--whole-tree",
        action="store_true",
        help="put every file back as it was at the checkpoint, the person's own edits made since included "
        "(default: undo only what the agent's tool calls changed, and keep the rest)",
    )
    rewind.add_argument("--dry-run", action="store_true", help="print the files and a diff; change nothing")
    _data_option(rewind)


def _print(obj: object) -> None:
    # ensure_ascii: a path that is not UTF-8 is kept as a \udcXX escape instead of failing to print.
    sys.stdout.write(json.dumps(obj) + "\n")


def _root(args: argparse.Namespace) -> Path:
    from toolgate.session_files import default_data_root

    return args.data_dir.expanduser().resolve() if args.data_dir else default_data_root()


def _store(args: argparse.Namespace) -> CheckpointStore:
    from toolgate.checkpoints.store import CheckpointStore

    return CheckpointStore.for_session(_root(args), args.session)


def checkpoints_command(args: argparse.Namespace) -> int:
    from toolgate.checkpoints.models import CheckpointError

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
    from toolgate.checkpoints.models import CheckpointError
    from toolgate.checkpoints.rewind import rewind
    from toolgate.session_files import SessionFiles
    from toolgate.session_lease import SessionInUse, hold_session

    what: RestoreWhat = args.what or "code"
    try:
        store = _store(args)
        files = SessionFiles(_root(args))
        # A chat session has a transcript to rewind; a run-tools session has only files.
        transcript = files.transcript_path(args.session) if files.exists(args.session) else None
        # Not under a chat that is appending to it (here or in an editor): that one's lease says so. A dry run
        # changes nothing and needs none.
        with contextlib.ExitStack() as held:
            if transcript is not None and not args.dry_run:
                held.enter_context(hold_session(files.session_dir(args.session), "toolgate rewind", doing="rewound"))
            turn = max((c.turn for c in store.checkpoints(args.session)), default=0)
            report, _ = rewind(
                store,
                args.session,
                args.to,
                what=what,
                transcript=transcript,
                turn=turn,
                dry_run=args.dry_run,
                whole_tree=args.whole_tree,
            )
    except (CheckpointError, SessionInUse) as exc:
        print(f"toolgate rewind: {exc}", file=sys.stderr)
        return 1
    if what != "conversation":
        _print_files(report, args.whole_tree)
    if what != "code":
        cut = "would go" if report.dry_run else "went"
        print(f"the conversation {cut} back to checkpoint {report.target} ({report.entries_removed} entries removed)")
    if report.dry_run:
        sys.stdout.write(report.diff)
    elif report.redo is not None:
        undo = " --conversation" if what == "conversation" else f" --whole-tree{'' if what == 'code' else ' --both'}"
        if args.data_dir is not None:  # the undo must find the same store
            undo += f" --data-dir {shlex.quote(str(_root(args)))}"
        print(f"undo this with: toolgate rewind --session {args.session} --to {report.redo}{undo}")
    if report.conflicts and what != "conversation":
        from toolgate.checkpoints.attribution import conflict_message

        print(f"toolgate rewind: {conflict_message(report, '--whole-tree')}", file=sys.stderr)
        return 1
    return 0


def _print_files(report: RestoreReport, whole_tree: bool) -> None:
    if whole_tree:
        verb = "would restore" if report.dry_run else "restored"
        print(f"{verb} {len(report.changes)} file(s) to checkpoint {report.target}")
    else:
        verb = "would undo" if report.dry_run else "undid"
        print(f"{verb} the agent's changes since checkpoint {report.target} in {len(report.changes)} file(s)")
    for change in report.changes:
        print(f"  {change.action:6} {change.path}")
    for conflict in report.conflicts:
        print(f"  kept   {conflict.path} (conflict: {conflict.reason})")
    for path in report.not_undoable:
        print(f"  not undoable: {path} (checkpoints did not capture it)")
