"""The session options every command shares (`--workspace`, `--permission-mode`, rules, `--add-dir`,
`--settings`, `--trust-workspace`, `--sandbox`), turned into a runtime. Problems with what was typed on the
command line stop the command; problems in settings files found on disk are reported on stderr (and the engine
fails closed for them)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolgate.checkpoints.models import CheckpointError
from toolgate.checkpoints.store import check_session_id
from toolgate.cli.errors import UsageError
from toolgate.core.permission import Approver, PermissionMode
from toolgate.permissions.decide import PermissionEngine
from toolgate.permissions.rules import Behavior, RuleError, parse_rule
from toolgate.permissions.settings import SettingsError, read_settings
from toolgate.permissions.sources import load_rule_book
from toolgate.runtime import Runtime, RuntimeOptions, build_runtime
from toolgate.sandbox.runtime import SANDBOX
from toolgate.sandbox.settings import SandboxRequest
from toolgate.session_files import default_data_root


def cli_rules(args: argparse.Namespace) -> dict[Behavior, list[str]]:
    rules: dict[Behavior, list[str]] = {"allow": args.allow, "ask": args.ask, "deny": args.deny}
    for behavior, texts in rules.items():
        for text in texts:
            try:
                parse_rule(text)
            except RuleError as exc:
                # A typed rule that is ignored (a deny above all) is worse than stopping here.
                raise UsageError(f"--{behavior} {text!r} is not a valid rule: {exc}") from None
    return rules


def settings_files(args: argparse.Namespace) -> list[Path]:
    files: list[Path] = []
    for raw in args.settings:
        path = Path(raw).expanduser().absolute()
        try:
            found = read_settings(path)
        except SettingsError as exc:
            raise UsageError(f"--settings {raw}: {exc.detail} (line {exc.line}); fix the file") from None
        if found is None:
            raise UsageError(f"--settings {raw}: there is no such file")
        files.append(path)
    return files


def default_mode(args: argparse.Namespace, workspace: Path, files: list[Path]) -> PermissionMode:
    """`--permission-mode`, else the settings files' defaultMode, else default."""
    if args.permission_mode:
        return PermissionMode(args.permission_mode)
    book = load_rule_book(workspace, home=Path.home(), flag_files=files, trust_workspace=workspace_trust(args))
    return book.default_mode or PermissionMode.DEFAULT


def workspace_trust(args: argparse.Namespace) -> bool | None:
    """True with --trust-workspace; otherwise None: as the user settings' trustedWorkspaces say."""
    return True if args.trust_workspace else None


def report_problems(engine: PermissionEngine) -> None:
    for problem in engine.problems:
        print(f"toolgate: {problem}", file=sys.stderr)
    for warning in engine.warnings:
        print(f"toolgate: warning: {warning}", file=sys.stderr)


def checkpoint_options(args: argparse.Namespace) -> dict[str, Any]:
    """A command with `--session-id`/`--data-dir` (run-tools) names a session a script can rewind later: it gets
    checkpoints under the data dir. Without either, a headless run leaves nothing behind."""
    session_id = getattr(args, "session_id", None)
    data_dir = getattr(args, "data_dir", None)
    if session_id is None and data_dir is None:
        return {}
    if session_id is not None:
        try:
            check_session_id(session_id)
        except CheckpointError as exc:
            raise UsageError(f"--session-id: {exc}") from None
    root = data_dir.expanduser().resolve() if data_dir is not None else default_data_root()
    return {"session_id": session_id, "checkpoints_root": root}


def runtime_from_args(args: argparse.Namespace, approver: Approver) -> Runtime:
    workspace = (args.workspace or Path.cwd()).expanduser()
    if not workspace.is_dir():
        raise UsageError(f"the workspace {workspace} is not a directory")
    for directory in args.add_dir:
        if not directory.expanduser().is_dir():
            raise UsageError(f"--add-dir {directory} is not a directory")
    runtime = build_runtime(
        workspace.resolve(),
        approver,
        RuntimeOptions(
            mode=PermissionMode(args.permission_mode) if args.permission_mode else None,
            additional_dirs=[d.expanduser().resolve() for d in args.add_dir],
            rules=cli_rules(args),
            settings_files=settings_files(args),
            trust_workspace=workspace_trust(args),
            sandbox=SandboxRequest(args.sandbox),
            **checkpoint_options(args),
        ),
    )
    report_problems(runtime.permissions)
    report_sandbox_problems(runtime)
    return runtime


def report_sandbox_problems(runtime: Runtime) -> None:
    for problem in runtime.session.deps.get(SANDBOX).problems:
        print(f"toolgate: {problem}", file=sys.stderr)
