"""`toolgate chat --print PROMPT`: one headless agent run, saved as a session that can be resumed.

Nobody can approve anything here, so a call that needs approval is denied with its reason (as in run-tools).
text output: the final answer on stdout; tool calls, retries and errors as short lines on stderr.
stream-json output: an `init` line, every chat event, then a `result` line, one JSON object per line.
API keys and base URLs come from the environment the way the SDKs read them (ANTHROPIC_API_KEY,
ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL); nothing secret is written to disk.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import Any

import anyio

from toolgate.agent.events import (
    ChatEvent,
    Compacted,
    CompactionFailed,
    ContextCleared,
    ErrorEvent,
    HookReport,
    Retrying,
    StopReason,
    ToolCallFinished,
    ToolCallStarted,
)
from toolgate.agent.loop import DEFAULT_MAX_TURNS, AgentChat
from toolgate.agent.model_catalog import MIN_CONTEXT_WINDOW
from toolgate.agent.providers import ModelConfig, ModelError, make_provider
from toolgate.agent.stored_chat import open_chat
from toolgate.cli.errors import UsageError
from toolgate.cli.options import (
    cli_rules,
    default_mode,
    report_problems,
    report_sandbox_problems,
    settings_files,
    workspace_trust,
)
from toolgate.core.permission import NonInteractiveApprover
from toolgate.mcp.session import McpOptions
from toolgate.runtime import RuntimeOptions
from toolgate.sandbox.settings import SandboxRequest
from toolgate.session_files import SessionFiles, SessionMeta, SessionNotFound
from toolgate.session_lease import SessionInUse, hold_session

EXIT_CODES: dict[StopReason, int] = {
    "end_turn": 0,
    "max_tokens": 0,
    "max_turns": 1,
    "error": 1,
    "prompt_blocked": 1,
    "interrupted": 130,
}


def add_chat_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", nargs="?", help="the message to send (default: read stdin)")
    parser.add_argument("--print", "-p", action="store_true", help="run headless: answer PROMPT and exit")
    parser.add_argument("--provider", choices=["anthropic", "openai"], default="anthropic")
    parser.add_argument("--model", default=None, help="model name (default: the provider's default)")
    parser.add_argument("--base-url", default=None, help="API base URL (default: from the SDK's environment)")
    parser.add_argument("--max-tokens", type=int, default=16_384, help="output token limit per reply")
    parser.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help="model requests per message")
    parser.add_argument("--output-format", choices=["text", "stream-json"], default="text")
    parser.add_argument("--data-dir", type=Path, default=None, help="where sessions are kept")
    parser.add_argument("--resume", metavar="SESSION_ID", default=None, help="continue a stored session")
    parser.add_argument("--session-id", default=None, help="the id for a new session (default: random)")
    parser.add_argument(
        "--compact",
        action="store_true",
        help="with --resume: summarise the session's older turns now and exit; PROMPT, if given, is what the "
        "summary should focus on",
    )
    parser.add_argument(
        "--context-window", type=int, default=None, help="the model's context window in tokens (default: per model)"
    )


def _check_args(args: argparse.Namespace) -> None:
    if not args.print:
        raise UsageError("interactive chat runs in the editor; for a headless run pass --print PROMPT")
    if args.max_turns < 1 or args.max_tokens < 1:
        raise UsageError("--max-turns and --max-tokens must be at least 1")
    if args.compact and not args.resume:
        raise UsageError("--compact works on a stored session: pass --resume SESSION_ID")
    if args.context_window is not None and args.context_window < MIN_CONTEXT_WINDOW:
        raise UsageError(f"--context-window must be at least {MIN_CONTEXT_WINDOW} tokens")
    if args.resume and args.session_id:
        raise UsageError("--resume continues an existing session; --session-id names a new one. Use one of them.")


def chat_command(args: argparse.Namespace) -> int:
    _check_args(args)
    reads_stdin = args.prompt in (None, "-") and not args.compact  # with --compact the prompt is an optional focus
    prompt = sys.stdin.read() if reads_stdin else (args.prompt or "")
    if not prompt.strip() and not args.compact:
        raise UsageError("the prompt is empty: pass it as an argument or on stdin")
    for directory in args.add_dir:
        if not directory.expanduser().is_dir():
            raise UsageError(f"--add-dir {directory} is not a directory")
    store = SessionFiles(args.data_dir.expanduser().resolve() if args.data_dir else None)
    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    if not args.resume and not workspace.is_dir():
        raise UsageError(f"the workspace {workspace} is not a directory")
    config = ModelConfig(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        max_tokens=args.max_tokens,
        context_window=args.context_window,
    )
    try:
        provider = make_provider(config)
    except ModelError as exc:
        print(f"toolgate chat: {exc.message}", file=sys.stderr)
        return 1
    rules, files = cli_rules(args), settings_files(args)
    # A new session starts in --permission-mode, else the settings' defaultMode; a resumed one keeps its mode
    # unless --permission-mode says otherwise.
    mode = default_mode(args, workspace, files) if not args.resume or args.permission_mode else None
    # The session is this process's alone while it runs: no rewind cuts its transcript, no other chat or editor
    # appends to it (toolgate.session_lease). A resumed one is taken before it is opened, which may repair it.
    with contextlib.ExitStack() as held:
        try:
            if args.resume and store.exists(args.resume):
                held.enter_context(hold_session(store.session_dir(args.resume), "toolgate chat", doing="resumed"))
            chat, meta = open_chat(
                store,
                provider,
                NonInteractiveApprover(),
                workspace=workspace,
                resume=args.resume,
                runtime=RuntimeOptions(
                    session_id=args.session_id,
                    mode=mode,  # a resumed session gets this run's mode too: permissions are per invocation
                    additional_dirs=[d.expanduser().resolve() for d in args.add_dir],
                    rules=rules,
                    settings_files=files,
                    trust_workspace=workspace_trust(args),
                    sandbox=SandboxRequest(args.sandbox),
                    # The approved MCP servers start with the first turn; approvals live under the data root.
                    mcp=McpOptions(data_dir=store.root, trust_workspace=workspace_trust(args)),
                ),
                max_turns=args.max_turns,
            )
            if not args.resume:  # a new session: nobody else knows its id yet, so this cannot be refused
                held.enter_context(hold_session(store.session_dir(meta.id), "toolgate chat", doing="opened"))
        except SessionInUse as exc:
            print(f"toolgate chat: {exc}", file=sys.stderr)
            return 1
        except SessionNotFound as exc:
            raise UsageError(f"cannot resume: {exc}") from None
        except (FileExistsError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        return _chat(args, chat, meta, workspace, prompt)


def _chat(args: argparse.Namespace, chat: AgentChat, meta: SessionMeta, workspace: Path, prompt: str) -> int:
    report_problems(chat.runtime.permissions)
    report_sandbox_problems(chat.runtime)
    if args.resume and args.workspace and Path(meta.workspace) != workspace:
        print(
            f"toolgate chat: note: session {meta.id} works in {meta.workspace}; --workspace is ignored",
            file=sys.stderr,
        )
    output = _JsonOutput(chat, meta.workspace) if args.output_format == "stream-json" else _TextOutput()
    chat.subscribe(output.event)
    stop: StopReason = anyio.run(_run, chat, prompt, args.compact)
    output.finish(chat, stop)
    return EXIT_CODES[stop]


async def _run(chat: AgentChat, prompt: str, compact: bool) -> StopReason:
    async def on_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                chat.interrupt()  # the turn ends with every call answered; then we exit with 130

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(on_signals)
            if compact:
                stop: StopReason = "end_turn" if await chat.compact(prompt.strip() or None) else "error"
            else:
                stop = await chat.send(prompt)
            group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await chat.aclose()
    return stop


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class _TextOutput:
    def event(self, event: ChatEvent) -> None:
        if isinstance(event, ToolCallStarted):
            print(f"· {event.name} {event.summary}", file=sys.stderr, flush=True)
        elif isinstance(event, ToolCallFinished) and event.is_error:
            print(f"  ✗ {event.summary}", file=sys.stderr, flush=True)
        elif isinstance(event, Retrying):
            print(f"  {event.message} Retrying in {event.delay_seconds:.1f}s.", file=sys.stderr, flush=True)
        elif isinstance(event, ContextCleared | HookReport | CompactionFailed):
            print(f"  {event.message}", file=sys.stderr, flush=True)
        elif isinstance(event, Compacted):
            print(
                f"  compacted: {event.summarised} earlier messages summarised, {event.kept} kept "
                f"(about {event.tokens_before:,} → {event.tokens_after:,} tokens)",
                file=sys.stderr,
                flush=True,
            )
        elif isinstance(event, ErrorEvent):
            print(f"toolgate chat: {event.message}", file=sys.stderr, flush=True)

    def finish(self, chat: AgentChat, stop: StopReason) -> None:
        answer = _final_text(chat)
        if answer:
            _write(answer if answer.endswith("\n") else answer + "\n")
        if stop == "max_turns":
            print(
                f"toolgate chat: stopped after {chat.max_turns} model requests (--max-turns); "
                f"continue with --resume {chat.id}",
                file=sys.stderr,
            )
        elif stop == "max_tokens":
            print("toolgate chat: the answer was cut off at --max-tokens", file=sys.stderr)
        elif stop == "interrupted":
            print(f"toolgate chat: interrupted; continue with --resume {chat.id}", file=sys.stderr)


class _JsonOutput:
    def __init__(self, chat: AgentChat, workspace: str) -> None:
        self._line(
            {
                "type": "init",
                "session_id": chat.id,
                "provider": chat.provider.name,
                "model": chat.provider.model,
                "workspace": workspace,
                "tools": chat.runtime.registry.names,
                "messages": len(chat.messages),
            }
        )

    @staticmethod
    def _line(payload: dict[str, Any]) -> None:
        _write(json.dumps(payload, ensure_ascii=False) + "\n")

    def event(self, event: ChatEvent) -> None:
        self._line(event.model_dump(mode="json"))

    def finish(self, chat: AgentChat, stop: StopReason) -> None:
        self._line({"type": "result", "session_id": chat.id, "stop_reason": stop, "text": _final_text(chat)})


def _final_text(chat: AgentChat) -> str:
    last = chat.messages[-1] if chat.messages else None
    return last.text() if last is not None and last.role == "assistant" else ""
