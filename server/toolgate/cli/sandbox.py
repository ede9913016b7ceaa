"""`toolgate sandbox status|policy|run -- CMD`: the Bash sandbox, looked at and tried by hand.

status: whether commands would run sandboxed here, and if not, why (exit status 0 when they would, 1 if not).
policy: the effective layout (what is read-only, writable, protected, hidden) and the network.
run:    one command inside the sandbox, with this terminal's output; its exit status is the command's. One
        word after `--` is a shell command line; several are a program and its arguments, quoted as they are.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

import anyio

from toolgate.cli.errors import UsageError
from toolgate.cli.options import runtime_from_args
from toolgate.core.context import HOME_DIR
from toolgate.core.errors import StateError
from toolgate.core.permission import NonInteractiveApprover
from toolgate.sandbox.policy import describe
from toolgate.sandbox.resident import NotStartedAdvice, start_background
from toolgate.sandbox.runtime import SANDBOX, Sandbox
from toolgate.shell.executor import command_env
from toolgate.shell.groups import BASH

# The person typed the command: what they can change, in their terms (not the model's `outside_sandbox`).
CLI_ADVICE = NotStartedAdvice(
    refused="Run it from a directory the sandbox shows, name a program it can see (`toolgate sandbox policy` lists "
    "what it shows), or run it without `toolgate sandbox run` if it must reach what the sandbox hides.",
    stopped="Run it again: a new sandbox starts.",
)


def _sandbox_of(args: argparse.Namespace) -> tuple[Sandbox, list[Path], Path, Path, tuple[str, ...]]:
    runtime = runtime_from_args(args, NonInteractiveApprover())
    session = runtime.session
    sandbox = session.deps.get(SANDBOX)
    home = session.deps.get(HOME_DIR)
    dirs = [session.workspace, *session.additional_dirs]
    pass_through = tuple(runtime.permissions.book.pass_through)
    anyio.run(runtime.aclose)
    return sandbox, dirs, home, session.workspace, pass_through


def sandbox_command(args: argparse.Namespace) -> int:
    sandbox, dirs, home, workspace, pass_through = _sandbox_of(args)
    try:
        return _act(args, sandbox, dirs, home, workspace, pass_through)
    finally:
        sandbox.close()


def _act(
    args: argparse.Namespace, sandbox: Sandbox, dirs: list[Path], home: Path, workspace: Path, env: tuple[str, ...]
) -> int:
    state = sandbox.state()
    if args.action == "status":
        print(f"sandbox: {state.describe()}")
        for problem in sandbox.problems:
            print(f"  problem: {problem}")
        if not state.active:
            print("  Bash commands run without a sandbox, and nothing is allowed on its account.")
        return 0 if state.active else 1
    if not state.active:
        print(f"toolgate sandbox {args.action}: the sandbox is off: {state.detail}", file=sys.stderr)
        return 1
    if args.action == "policy":
        print(describe(sandbox.plan(dirs, home, [])))
        rules = sandbox.settings.network
        if rules:
            print(f"network    through the sandbox's proxy, only to: {', '.join(rules)}")
        else:
            print("network    off (own network namespace; no host can be reached)")
        print(f"autoAllow  {'on' if state.auto_allow else 'off'}")
        return 0
    words = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not words:
        raise UsageError("name the command to run: toolgate sandbox run -- CMD")
    try:
        launch = sandbox.launch(dirs, home, [], outside=False)
    except StateError as exc:
        print(f"toolgate sandbox run: {exc}", file=sys.stderr)
        return 1
    # One word is a command line, as Bash gets it; several are argv as the shell that ran us split it, and
    # joining them with spaces would split `sh -c 'sleep 1'` once more.
    line = words[0] if len(words) == 1 else shlex.join(words)
    argv = [*launch.prefix, BASH, "-c", line]
    child_env = {**command_env(env), **launch.env}
    if launch.lease is None:
        code = subprocess.run(argv, cwd=workspace, env=child_env, check=False).returncode
    else:
        try:
            process = start_background(
                launch.lease, argv, workspace, child_env, 1, errors=2, stdin=0, advice=CLI_ADVICE
            )
        except StateError as exc:
            sandbox.finish(launch)
            print(f"toolgate sandbox run: {exc}", file=sys.stderr)
            return 1
        code = process.wait()
    blocked = sandbox.finish(launch)
    if blocked is not None:
        print(f"toolgate sandbox run: {blocked}", file=sys.stderr)
    return code
