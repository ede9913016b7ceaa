"""`toolgate run-tools`: a headless session over JSON Lines.

stdin: each line is one tool_use object or a JSON array of them (one assistant turn, batched).
stdout: one tool_result per tool_use, in order, flushed after each input line. A line that cannot be used
yields a `{"type": "error", "message": ...}` line and the session goes on.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import signal
import stat
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
from pydantic import ValidationError

from toolgate.cli.options import runtime_from_args
from toolgate.core.messages import ToolUse
from toolgate.core.orchestrator import CancelToken
from toolgate.core.permission import NonInteractiveApprover
from toolgate.runtime import Runtime


def _emit(write: Callable[[str], None], obj: dict[str, Any]) -> None:
    write(json.dumps(obj, ensure_ascii=False) + "\n")


def parse_line(line: str) -> tuple[list[ToolUse], list[str]]:
    """The tool_uses on one input line, and a message for each part that is not one."""
    try:
        payload = json.loads(line)
    except json.JSONDecodeError as exc:
        return [], [f"the line is not valid JSON ({exc.msg} at column {exc.colno}); send one JSON value per line"]
    items = payload if isinstance(payload, list) else [payload]
    uses: list[ToolUse] = []
    problems: list[str] = []
    for position, item in enumerate(items, start=1):
        where = f"item {position} of the array" if isinstance(payload, list) else "the line"
        if not isinstance(item, dict) or item.get("type", "tool_use") != "tool_use":
            problems.append(
                f'{where} is not a tool_use object ({{"type":"tool_use","id":..,"name":..,"input":{{..}}}})'
            )
            continue
        try:
            uses.append(ToolUse.model_validate(item))
        except ValidationError as exc:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
            problems.append(f"{where} is not a usable tool_use: missing or invalid {fields}")
    return uses, problems


class Interrupted(Exception):
    """SIGINT/SIGTERM arrived: the running turn was answered (with cancellations), and the session ends."""


async def serve_lines(runtime: Runtime, lines: AsyncIterator[str], write: Callable[[str], None]) -> None:
    """Run each input line as one turn. A signal interrupts the running turn, prints its results, and ends."""
    running: list[CancelToken] = []
    interrupted = anyio.Event()

    async def on_signals(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                interrupted.set()
                if running:
                    running[-1].cancel()  # its results are still printed, then the loop stops
                else:
                    scope.cancel()

    with anyio.CancelScope() as outer:
        async with anyio.create_task_group() as group:
            group.start_soon(on_signals, outer)
            async for line in lines:
                # Not stripped: JSON allows whitespace around the value, and a 5 MB Write would be copied once more.
                if not line or line.isspace():
                    continue
                uses, problems = parse_line(line)
                for problem in problems:
                    _emit(write, {"type": "error", "message": problem})
                if uses:
                    await _begin_turn(runtime)
                    token = CancelToken()
                    running.append(token)
                    try:
                        results = await runtime.orchestrator.run_turn(uses, token)
                    finally:
                        running.pop()
                    for result in results:
                        _emit(write, result.model_dump(mode="json"))
                sys.stdout.flush()
                if interrupted.is_set():
                    break
            group.cancel_scope.cancel()
    if interrupted.is_set():
        raise Interrupted


async def _begin_turn(runtime: Runtime) -> None:
    """Each input line is a turn: its checkpoint first (a failure is said on stderr; the turn still runs)."""
    checkpoints = runtime.checkpoints
    if checkpoints is not None:
        warning = await checkpoints.begin_turn()
        if warning is not None:
            print(f"toolgate: warning: {warning}", file=sys.stderr)


def run_tools_command(args: argparse.Namespace) -> int:
    runtime = runtime_from_args(args, NonInteractiveApprover())

    async def main() -> None:
        try:
            if args.mcp:
                from toolgate.cli.mcp import start_mcp_servers

                await start_mcp_servers(runtime, args)
            await serve_lines(runtime, stdin_lines(), _write_stdout)
        finally:
            with anyio.CancelScope(shield=True):
                await runtime.aclose()

    try:
        anyio.run(main)
    except Interrupted:
        return 130
    return 0


# The buffer stdin is read into starts this big and grows to the longest line; a line that grew it past
# `_KEEP_BYTES` is not kept in memory for the rest of the session.
_READ_BYTES = 1 << 20
_KEEP_BYTES = 16 << 20
# What a pipe to stdin is widened to (the most an unprivileged process may ask for, /proc/sys/fs/pipe-max-size):
# the client then hands a big line over in a few writes instead of one per 64 KiB, each waiting for our read.
_PIPE_BYTES = 1 << 20


def read_lines(readinto: Callable[[memoryview], int]) -> Iterator[str]:
    """The lines that `readinto` puts into a buffer until it gives 0 (end of input), each with its "\\n" (the
    last one may have none), decoded as UTF-8 (a byte that is not UTF-8 becomes a lone surrogate).

    One buffer serves every line, and a line is decoded straight out of it: a 5 MB line costs one read into
    memory that is already there and one decode, where reading it in blocks and joining them cost a fresh
    block per read, a join and the page faults of both (the text layer of sys.stdin took 8 KiB a time)."""
    buffer = bytearray(_READ_BYTES)
    start = end = scanned = 0  # the line being read is buffer[start:end]; buffer[start:scanned] holds no "\n"
    while True:
        newline = buffer.find(b"\n", scanned, end)
        if newline != -1:
            yield _decoded(buffer, start, newline + 1)
            start = scanned = newline + 1
            continue
        if start == end and len(buffer) > _KEEP_BYTES:
            buffer = bytearray(_READ_BYTES)
        if start:  # the start of the next line moves to the front, where the buffer has room after it
            buffer[: end - start] = buffer[start:end]
            start, end = 0, end - start
        scanned = end
        if end == len(buffer):
            buffer.extend(bytes(len(buffer)))
        with memoryview(buffer) as view:
            count = readinto(view[end:])
        if not count:
            break
        end += count
    if start < end:
        yield _decoded(buffer, start, end)


def _decoded(buffer: bytearray, start: int, stop: int) -> str:
    with memoryview(buffer) as view, view[start:stop] as line:
        return str(line, "utf-8", "surrogateescape")


def widen_pipe(fd: int) -> None:
    """Make a pipe at `fd` hold `_PIPE_BYTES` if it holds less (Linux; anything else, or a refusal, leaves it)."""
    get_size, set_size = getattr(fcntl, "F_GETPIPE_SZ", None), getattr(fcntl, "F_SETPIPE_SZ", None)
    if get_size is None or set_size is None:
        return
    with contextlib.suppress(OSError):
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, get_size) < _PIPE_BYTES:
            fcntl.fcntl(fd, set_size, _PIPE_BYTES)


async def stdin_lines() -> AsyncIterator[str]:
    """stdin lines, read by a daemon thread so that waiting for input can be cancelled (by a signal).

    JSON Lines are UTF-8 whatever the locale; a byte that is not UTF-8 becomes a lone surrogate (as the C.UTF-8
    locale's stdin made it), so that it reaches the tool as the path or text it was instead of ending the session."""
    send, receive = anyio.create_memory_object_stream[str | None](max_buffer_size=16)
    token = anyio.lowlevel.current_token()

    def pump() -> None:
        try:
            # The file descriptor, not sys.stdin.buffer: a daemon thread blocked inside a buffered reader holds its
            # lock, and the interpreter aborts when it cannot take that lock at exit (a signal while idle).
            fd = sys.stdin.fileno()
            widen_pipe(fd)
            for line in read_lines(lambda view: os.readv(fd, [view])):
                anyio.from_thread.run(send.send, line, token=token)
        except (anyio.RunFinishedError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # the session ended while we waited for input
        except (OSError, ValueError, AttributeError) as exc:
            # No stdin (closed, or none at all) or a failed read: the input ends here, said so, instead of the
            # reader dying quietly and the session waiting for lines that cannot come.
            sys.stderr.write(f"toolgate run-tools: stdin could not be read ({exc}); no more calls are taken.\n")
        with contextlib.suppress(anyio.RunFinishedError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            anyio.from_thread.run(send.send, None, token=token)

    threading.Thread(target=pump, name="toolgate-stdin", daemon=True).start()
    async with receive:
        async for line in receive:
            if line is None:
                return
            yield line


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
