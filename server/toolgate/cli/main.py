from __future__ import annotations

import argparse
import io
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from toolgate import __version__
from toolgate.cli.errors import UsageError
from toolgate.core.permission import PermissionMode


def _add_session_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", type=Path, default=None, help="the first working directory (default: cwd)")
    parser.add_argument(
        "--permission-mode",
        choices=[m.value for m in PermissionMode],
        default=None,
        help="how calls that no rule decides are treated (default: the settings' defaultMode, else default)",
    )
    for flag, what in (("--allow", "allow"), ("--ask", "ask about"), ("--deny", "deny")):
        parser.add_argument(flag, action="append", default=[], metavar="RULE", help=f"{what} calls matching RULE")
    parser.add_argument("--add-dir", action="append", default=[], type=Path, metavar="DIR", help="another working dir")
    parser.add_argument("--settings", action="append", default=[], type=Path, metavar="FILE", help="a settings file")
    _add_trust_option(parser)
    parser.add_argument(
        "--sandbox",
        choices=["auto", "on", "off"],
        default=None,
        help="run Bash commands in the sandbox (default: the settings' sandbox.enabled, else auto: when available)",
    )


def _add_trust_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust-workspace",
        action="store_true",
        help="let the workspace's own .toolgate settings files widen permissions (allow rules, hooks, "
        "defaultMode, additionalDirectories) for this run; `toolgate trust` does it for good",
    )


def build_parser(chat_options: bool = True) -> argparse.ArgumentParser:
    """The whole command line. `chat_options=False` leaves out the chat command's own options, whose module
    imports the agent and its providers: `toolgate serve` (every editor window's start) need not pay for them."""
    parser = argparse.ArgumentParser(prog="toolgate", description="The tool layer of a coding agent.")
    parser.add_argument("--version", action="version", version=f"toolgate {__version__}")
    parser.add_argument("--log-level", default="WARNING", help="log level for stderr (default: WARNING)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run_tools = commands.add_parser(
        "run-tools",
        help="run tool calls read as JSON Lines from stdin; print one tool_result per call",
        description="Headless session: each stdin line is a tool_use object or a JSON array of them (one turn).",
    )
    _add_session_options(run_tools)
    run_tools.add_argument(
        "--mcp", action="store_true", help="also offer the tools of the approved MCP servers (`toolgate mcp list`)"
    )
    run_tools.add_argument(
        "--session-id", default=None, help="name the session, to list its checkpoints or rewind it later"
    )
    run_tools.add_argument(
        "--data-dir", type=Path, default=None, help="where checkpoints are kept (default: $XDG_DATA_HOME/toolgate)"
    )

    chat = commands.add_parser(
        "chat",
        help="let a model use the tools: `chat --print PROMPT` answers one message headless",
        description="Headless agent run, saved as a session (continue it with --resume SESSION_ID).",
    )
    _add_session_options(chat)
    if chat_options:
        from toolgate.cli.chat import add_chat_options

        add_chat_options(chat)

    serve = commands.add_parser(
        "serve",
        help="run the sidecar for the editor: JSON-RPC over stdio",
        description="The editor's sidecar: LSP-framed JSON-RPC on stdin/stdout; logs go to stderr.",
    )
    serve.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="where sessions live unless the editor passes storageDir (default: $XDG_DATA_HOME/toolgate)",
    )
    _add_trust_option(serve)  # the editor passes it: VS Code's Workspace Trust has already asked

    trust = commands.add_parser(
        "trust",
        help="trust a folder's own settings files (or --remove the trust, or --list what is trusted)",
        description="A workspace's .toolgate settings files can only restrict (deny and ask rules) until you "
        "trust it; then their allow rules, hooks, defaultMode and additionalDirectories apply as well (each hook "
        "once its command is reviewed too: `toolgate hooks`). Trusting a folder trusts every folder below it. "
        "Recorded in your user settings file (trustedWorkspaces).",
    )
    trust.add_argument("folder", nargs="?", type=Path, default=None, help="the folder (default: cwd)")
    what = trust.add_mutually_exclusive_group()
    what.add_argument("--remove", action="store_true", help="stop trusting the folder")
    what.add_argument("--list", action="store_true", help="print the trusted folders")

    _add_hooks_parser(commands)

    from toolgate.cli.checkpoints import add_checkpoint_commands

    add_checkpoint_commands(commands)

    protocol = commands.add_parser("protocol", help="print the sidecar's wire protocol")
    protocol.add_argument("what", choices=["schema", "typescript"], help="JSON Schema, or TypeScript types from it")
    protocol.add_argument("--out", type=Path, default=None, help="typescript: write to this file instead of stdout")
    protocol.add_argument("--check", action="store_true", help="typescript: fail if --out is not up to date")

    permissions = commands.add_parser(
        "permissions",
        help="explain permission decisions (check calls against the rules; list the rules)",
        description="The same permission engine the editor uses. Nothing is ever run.",
    )
    actions = permissions.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="decide calls read as JSON Lines from stdin, without running them",
        description='Each stdin line is {"tool": NAME, "input": {...}}; each stdout line is '
        '{"decision": "allow"|"ask"|"deny", "read_only": BOOL, "reason": TEXT, "rule": RULE|null}.',
    )
    _add_session_options(check)
    listing = actions.add_parser("list", help="the effective rules, where each comes from, and any problems")
    _add_session_options(listing)
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")

    # Defined here, not in their commands' modules, which import the runtime: building the parser must stay cheap.
    _add_sandbox_parser(commands)
    mcp_actions = _add_mcp_parser(commands)
    mcp_serve = mcp_actions.add_parser(
        "serve",
        help="serve toolgate's tools over MCP stdio (for Claude Code, Codex CLI, Gemini CLI, VS Code)",
        description="An MCP server on stdin/stdout with toolgate's runner, permission engine and output store.",
    )
    _add_session_options(mcp_serve)
    return parser


def _add_hooks_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hooks = commands.add_parser(
        "hooks",
        help="list the configured hooks, and review (trust) or revoke the workspace's",
        description="A hook from a workspace's .toolgate settings files runs only in a trusted workspace and while "
        "its event, matcher and command are trusted: a changed command waits for review. Trust is recorded in your "
        "user settings file (trustedHooks); your own hooks always run.",
    )
    actions = hooks.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every hook: where it comes from, its command, whether it runs")
    listing.add_argument("--json", action="store_true", help="print JSON")
    trust = actions.add_parser("trust", help="trust workspace hooks by id (after reading their commands)")
    trust.add_argument("ids", nargs="*", metavar="ID", help="a hook's id from `toolgate hooks list`")
    trust.add_argument("--all", action="store_true", help="every workspace hook waiting for review")
    revoke = actions.add_parser("revoke", help="withdraw the trust of a workspace hook")
    revoke.add_argument("id", metavar="ID", help="the hook's id")
    for action in (listing, trust, revoke):
        action.add_argument("--workspace", type=Path, default=None, help="the workspace (default: cwd)")
        action.add_argument(
            "--settings", action="append", default=[], type=Path, metavar="FILE", help="a settings file"
        )
        _add_trust_option(action)


def _add_sandbox_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sandbox = commands.add_parser(
        "sandbox",
        help="the Bash sandbox: status, the effective policy, or run a command in it by hand",
        description="Bash commands run in a bubblewrap sandbox when it is available: the file system is read-only "
        "apart from the working directories (minus their protected paths) and a private /tmp; credentials are "
        "hidden; there is no network.",
    )
    actions = sandbox.add_subparsers(dest="action", required=True, metavar="ACTION")
    status = actions.add_parser("status", help="whether Bash commands run sandboxed here, and if not, why")
    _add_session_options(status)
    policy = actions.add_parser("policy", help="the effective mounts and network rules, readable")
    _add_session_options(policy)
    run = actions.add_parser("run", help="run one command in the sandbox: toolgate sandbox run -- CMD")
    _add_session_options(run)
    run.add_argument(
        "cmd",
        nargs=argparse.REMAINDER,
        help="the command (after --): one word is a shell command line for /bin/bash -c ('make test && ls'); "
        "several are a program and its arguments, each passed as it is (sh -c 'sleep 1')",
    )


def _add_mcp_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    mcp = commands.add_parser(
        "mcp",
        help="MCP servers: list and approve the ones toolgate uses, or serve toolgate's tools over MCP",
        description="Servers come from mcpServers in your user settings and in the workspace's .mcp.json. Each "
        "starts only once approved (and a workspace's only once the workspace is trusted).",
    )
    actions = mcp.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, what in (
        ("list", "the configured servers and whether each may start"),
        ("approve", "approve a server's settings (and, after a change, its new tool list)"),
        ("revoke", "withdraw a server's approval"),
        ("diff", "what changed in a server's tools since you approved them"),
    ):
        action = actions.add_parser(name, help=what)
        if name != "list":
            action.add_argument("name", help="the server's name in mcpServers")
        else:
            action.add_argument("--json", action="store_true", help="print JSON")
        action.add_argument("--workspace", type=Path, default=None, help="the workspace (default: cwd)")
        action.add_argument("--data-dir", type=Path, default=None, help="toolgate's data dir (approvals)")
        action.add_argument("--trust-workspace", action="store_true", help="treat the workspace as trusted")
    return actions


def _printable_streams(*, json_lines: bool) -> None:
    """Nothing toolgate prints ends a command with a UnicodeEncodeError: a character the locale's encoding cannot
    show is escaped. JSON Lines go out as UTF-8 whatever the locale, as they come in (a lone surrogate, from a byte
    that was not UTF-8, as its JSON escape, which every reader parses)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    if json_lines and isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    # Only a command line that names `chat` can reach the chat parser's options.
    parser = build_parser(chat_options="chat" in arguments)
    args = parser.parse_args(arguments)
    _printable_streams(json_lines=args.command == "run-tools" or getattr(args, "output_format", None) == "stream-json")
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level.upper(), format="toolgate %(levelname)s %(name)s: %(message)s"
    )
    try:
        if args.command == "run-tools":
            from toolgate.cli.run_tools import run_tools_command

            return run_tools_command(args)
        if args.command == "chat":
            from toolgate.cli.chat import chat_command

            return chat_command(args)
        if args.command == "serve":
            from toolgate.cli.serve import serve_command

            return serve_command(args)
        if args.command == "trust":
            from toolgate.cli.trust import trust_command

            return trust_command(args)
        if args.command in ("checkpoints", "rewind"):
            from toolgate.cli.checkpoints import checkpoints_command, rewind_command

            return checkpoints_command(args) if args.command == "checkpoints" else rewind_command(args)
        if args.command == "protocol":
            from toolgate.cli.protocol import protocol_command

            return protocol_command(args)
        if args.command == "mcp":
            from toolgate.cli.mcp import mcp_command

            return mcp_command(args)
        if args.command == "hooks":
            from toolgate.cli.hooks import hooks_command

            return hooks_command(args)
        if args.command == "permissions":
            from toolgate.cli.permissions import permissions_command

            return permissions_command(args)
        if args.command == "sandbox":
            from toolgate.cli.sandbox import sandbox_command

            return sandbox_command(args)
    except UsageError as exc:
        name = " ".join(filter(None, (args.command, getattr(args, "action", None))))
        print(f"toolgate {name}: {exc}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command!r}")
    return 2
