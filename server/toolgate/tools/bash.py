"""Bash: run a command in /bin/bash, in the session's working directory, with a timeout and capped output.

Whether a call is read-only (and so may run in parallel and without asking) comes from the shell
classifier, never from the program's name alone. The working directory persists between calls; shell
state (variables, functions) does not.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import anyio
from pydantic import Field

from toolgate.bash.classify import Classification, classify
from toolgate.core.child_env import PASS_THROUGH
from toolgate.core.context import HOME_DIR, ToolContext
from toolgate.core.errors import StateError
from toolgate.core.output_store import OUTPUT_STORE, OutputStore
from toolgate.core.paths import display_path, expand_path, inside_any
from toolgate.core.permission import mode_traits
from toolgate.core.tool import DescribeContext, Rendered, Tool, ToolInput, ToolTraits
from toolgate.sandbox.runtime import SANDBOX
from toolgate.shell.executor import command_env, open_plain, run_command
from toolgate.shell.host import SHELL_HOST
from toolgate.shell.output import INLINE_LIMIT, Captured, OutputCapture

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000

# Devices that are read or written without touching any file worth a permission check.
_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/zero", "/dev/urandom"})

# What programs print when the sandbox refused them something (errno texts; curl's and git's own words).
_SANDBOX_SIGNS = (
    "Read-only file system", "Device or resource busy", "Network is unreachable", "Could not resolve host",
    "Temporary failure in name resolution", "Name or service not known", "Couldn't connect to server",
    "Operation not permitted", "Is a directory",
)  # fmt: skip
SANDBOX_FAILURE_NOTE = (
    "It ran in the sandbox, which blocks writes outside the working directories, writes to protected paths "
    "(.git/hooks, .git/config, .toolgate, .vscode, ...), credential files and the network (only hosts a "
    "Network(domain:host) rule in the user's sandbox.network settings are reachable, through its proxy). If it "
    "failed because of that, call it again with outside_sandbox: true and the user will be asked."
)

SANDBOX_NOT_FOUND_NOTE = (
    "A program was not found inside the sandbox. There /tmp, /run and /var/tmp are private and empty: a program "
    "that lives there is visible only through a PATH directory (a virtualenv in /tmp whose bin is on PATH). Run "
    "it through PATH, install it elsewhere, or call again with outside_sandbox: true and the user will be asked."
)

# The errno text of a write refused by a read-only mount; and the quoted path or the `path:` before it on that line.
_READ_ONLY_SIGN = "Read-only file system"
_REFUSED_PATH = re.compile(r"['\"`‘]([^'\"`’\n]+)['\"`’]|([^\s:'\"]+): Read-only file system")
_MAX_REFUSED_SHOWN = 5

# Programs for which exit status 1 is an answer, not a failure.
_EXIT_ONE_MEANS = {
    "grep": "no lines matched",
    "egrep": "no lines matched",
    "fgrep": "no lines matched",
    "rg": "no matches were found",
    "diff": "the inputs differ",
    "cmp": "the files differ",
    "test": "the condition is false",
    "[": "the condition is false",
    "find": "some paths could not be read",
}


class BashInput(ToolInput):
    command: str = Field(description="The command to run, as you would type it in bash.")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=f"Milliseconds to wait before stopping the command (default {DEFAULT_TIMEOUT_MS}, "
        f"at most {MAX_TIMEOUT_MS}).",
    )
    description: str | None = Field(
        default=None, description="Five to ten words saying what the command does, shown to the user."
    )
    run_in_background: bool = Field(
        default=False,
        description="Start the command and return at once with an id; read its output later with BashOutput.",
    )
    outside_sandbox: bool = Field(
        default=False,
        description="Run without the sandbox (only when a sandboxed run failed because the sandbox blocked "
        "something it needs); the user is asked first.",
    )
    writes: bool = Field(
        default=False,
        description="The command writes files: set it when a run allowed as read-only was stopped from writing. "
        "It is then judged as a command that changes things (the user may be asked).",
    )


@dataclass(frozen=True, slots=True)
class BashResult:
    command: str
    captured: Captured | None
    exit_code: int | None
    timed_out: bool
    timeout_s: float
    duration_s: float
    notes: tuple[str, ...]
    final_argv: tuple[str, ...]
    background_id: str | None = None


def _timeout(requested_ms: int | None) -> tuple[float, str | None]:
    if requested_ms is None:
        return DEFAULT_TIMEOUT_MS / 1000, None
    if requested_ms > MAX_TIMEOUT_MS:
        note = (
            f"The timeout asked for ({requested_ms} ms) is over the {MAX_TIMEOUT_MS} ms maximum, "
            f"so {MAX_TIMEOUT_MS // 1000} s was used."
        )
        return MAX_TIMEOUT_MS / 1000, note
    return requested_ms / 1000, None


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


def _usable_dir(path: Path, ctx: ToolContext) -> bool:
    return path.is_dir() and inside_any(path, ctx.working_dirs)


class BashTool(Tool[BashInput, BashResult]):
    name = "Bash"
    traits = ToolTraits()  # may run anything; whether a command only reads is answered per command below
    input_model = BashInput
    max_result_chars = None  # Bash keeps its own head-and-tail preview under the cap and stores the rest

    def description(self, ctx: DescribeContext) -> str:
        prefer = [
            (tool, use)
            for tool, use in (
                ("Read", "to read files (not cat, head or tail)"),
                ("Grep", "to search file contents (not grep or rg)"),
                ("Glob", "to find files by name (not find or ls)"),
                ("Edit", "to change files (not sed or awk)"),
                ("Write", "to create files (not echo or cat with a redirection)"),
            )
            if tool in ctx.tool_names
        ]
        preferences = "".join(f"\n- Use {tool} {use}." for tool, use in prefer)
        later = (
            " Read its output with BashOutput and stop it with KillShell."
            if {"BashOutput", "KillShell"} <= ctx.tool_names
            else ""
        )
        stored = " Read the rest with ToolOutput." if "ToolOutput" in ctx.tool_names else ""
        return (
            "Run a command in bash and return what it printed (stdout and stderr together, in order).\n"
            "- The working directory carries over from one call to the next (a `cd` sticks); variables, "
            "functions and other shell state do not. If the directory disappears or leaves the working "
            "directories, it goes back to the workspace and the result says so. Prefer absolute paths to cd.\n"
            "- There is no input: stdin is empty, so interactive programs get end-of-file at once. Editors and "
            "pagers are disabled (GIT_EDITOR=true, PAGER=cat).\n"
            f"- Commands stop after {DEFAULT_TIMEOUT_MS // 1000} s unless you pass timeout in milliseconds "
            f"(at most {MAX_TIMEOUT_MS}); at the timeout the command and everything it started are stopped.\n"
            f"- Output over {INLINE_LIMIT:,} characters is shortened to its start and end; the full output is "
            f"kept and its reference given.{stored}\n"
            "- A non-zero exit status is reported as an error that starts with the exit code (exit 1 from grep, "
            "rg, diff, cmp, test and find is an answer, not an error).\n"
            "- Set run_in_background for servers, watchers and other long runs: you get an id at once."
            f"{later} Processes a foreground command leaves running are stopped when it finishes.\n"
            "- Read-only commands (git log, ls, rg, sed -n …) run without asking and in parallel with other "
            "read-only calls; anything that can change files or run unknown programs may need approval.\n"
            "- Quote paths that contain spaces. Chain dependent commands with &&; make independent commands "
            "separate calls in the same turn." + preferences
        )

    # --- properties of the arguments ----------------------------------------------------------------
    def _classification(self, tool_input: BashInput) -> Classification:
        return classify(tool_input.command)

    def is_read_only(self, tool_input: BashInput) -> bool:
        claimed = tool_input.writes or tool_input.outside_sandbox  # judged as writing (permissions/facts.py)
        return not claimed and self._classification(tool_input).read_only

    def is_concurrency_safe(self, tool_input: BashInput) -> bool:
        return self.is_read_only(tool_input)

    def paths(self, tool_input: BashInput, ctx: ToolContext) -> Sequence[Path]:
        """Every path the command reads or writes, resolved against the session's working directory."""
        result: dict[Path, None] = {}
        base, home = ctx.session.cwd, ctx.get(HOME_DIR)
        for command in self._classification(tool_input).commands:
            for raw in (*command.read_targets, *command.write_targets):
                if not raw or raw == "-" or raw in _DEVICES or raw.startswith("/dev/fd/"):
                    continue
                try:
                    result[expand_path(raw, base, home)] = None
                except StateError:
                    continue
        return list(result)

    def summary(self, tool_input: BashInput, workspace: Path) -> str:
        return tool_input.command

    async def validate(self, tool_input: BashInput, ctx: ToolContext) -> None:
        if not tool_input.command.strip():
            raise StateError("The command is empty. Send the command to run in `command`.")
        if "\x00" in tool_input.command:
            raise StateError("The command contains a NUL byte, which bash cannot receive. Send the command without it.")

    # --- running --------------------------------------------------------------------------------------
    def _start_dir(self, ctx: ToolContext) -> tuple[Path, str | None]:
        cwd = ctx.session.cwd
        if _usable_dir(cwd, ctx):
            return cwd, None
        workspace = ctx.workspace
        if not workspace.is_dir():
            raise StateError(
                f"The workspace {workspace} no longer exists, so there is no directory to run the command in. "
                "Ask the user to reopen the session on an existing directory."
            )
        why = "no longer exists" if not cwd.is_dir() else "is outside the working directories"
        ctx.commit(lambda s: setattr(s, "cwd", workspace))
        return workspace, f"The shell's directory {cwd} {why}, so this command ran in the workspace {workspace}."

    def _end_dir(self, start: Path, final: Path | None, ctx: ToolContext) -> str | None:
        if final is None or final == start:
            return None
        workspace = ctx.workspace
        if not _usable_dir(final, ctx):
            why = "which no longer exists" if not final.is_dir() else "outside the working directories"
            ctx.commit(lambda s: setattr(s, "cwd", workspace))
            return f"The command ended in {final}, {why}; the shell's directory was reset to {workspace}."
        ctx.commit(lambda s: setattr(s, "cwd", final))
        return f"The working directory is now {display_path(final, workspace)}."

    @staticmethod
    def _pass_through(ctx: ToolContext) -> tuple[str, ...]:
        """The secret-looking variables the user's settings hand to commands on purpose (env.passThrough)."""
        return ctx.get(PASS_THROUGH)

    async def call(self, tool_input: BashInput, ctx: ToolContext) -> BashResult:
        sandbox = ctx.get(SANDBOX)  # before the shell host, so it closes after the host stopped its commands
        host = ctx.get(SHELL_HOST)
        store = ctx.get(OUTPUT_STORE)
        timeout_s, clamp_note = _timeout(tool_input.timeout)
        cwd, start_note = self._start_dir(ctx)
        notes = [n for n in (start_note,) if n]
        final_argv = self._classification(tool_input).final_argv
        # Allowed because it only reads (or planning, where nothing may change): it runs where nothing is
        # writable, so a wrong read-only verdict costs a failed command, not a changed file.
        read_only = mode_traits(ctx.mode).read_only or ctx.allowed_because == "read_only"
        launch = sandbox.launch(
            ctx.working_dirs,
            ctx.get(HOME_DIR),
            [host.directory],
            outside=tool_input.outside_sandbox,
            read_only=read_only,
            fixed=[host.rc_file],
        )
        notes.extend(n for n in (launch.note,) if n)

        if tool_input.run_in_background:
            try:
                task = host.start(
                    tool_input.command,
                    cwd=cwd,
                    env={**command_env(self._pass_through(ctx)), **launch.env},
                    prefix=launch.prefix,
                    spawn=launch.spawn_background,
                )
            except BaseException:
                sandbox.finish(launch)
                raise
            task.notes = sandbox.refusal_feed(launch)
            if tool_input.timeout is not None:
                notes.append("The timeout does not apply to background commands; stop this one with KillShell.")
            return BashResult(tool_input.command, None, None, False, 0.0, 0.0, tuple(notes), final_argv, task.id)

        notes.extend(n for n in (clamp_note,) if n)
        spills: list[tuple[str, Path]] = []
        source = f"Bash {ctx.tool_use_id}"

        def open_spill() -> tuple[str, TextIO]:
            ref, path = store.new_path()
            spills.append((ref, path))
            return ref, open(path, "w", encoding="utf-8", errors="surrogatepass")

        capture = OutputCapture(open_spill)
        started = anyio.current_time()
        try:
            run = await run_command(
                tool_input.command,
                cwd=cwd,
                env={**command_env(self._pass_through(ctx), BASH_ENV=str(host.rc_file)), **launch.env},
                timeout_s=timeout_s,
                capture=capture,
                cwd_file=host.cwd_file(),
                on_output=lambda text: ctx.progress("output", text),
                prefix=launch.prefix,
                spawn=launch.spawn or open_plain,
            )
        except anyio.get_cancelled_exc_class():
            sandbox.finish(launch)
            captured = capture.result()
            _adopt(store, spills, source)
            ctx.partial_result = render_interrupted(captured, anyio.current_time() - started, notes)
            raise
        captured = capture.result()
        _adopt(store, spills, source)
        blocked_note = sandbox.finish(launch)
        end_note = None if run.timed_out else self._end_dir(cwd, run.final_cwd, ctx)
        notes.extend(n for n in (end_note,) if n)
        if run.stopped_leftovers:
            notes.append(
                "The command left processes running when it finished; they were stopped. Start long-running "
                "processes with run_in_background."
            )
        if blocked_note is not None:
            notes.append(blocked_note)
        elif launch.read_only and _READ_ONLY_SIGN in captured.text:
            notes.append(read_only_refusal(captured.text, plan=mode_traits(ctx.mode).read_only))
        elif launch.sandboxed and run.exit_code == 127:
            notes.append(SANDBOX_NOT_FOUND_NOTE)
        elif launch.sandboxed and run.exit_code != 0 and _blocked_by_sandbox(captured.text):
            notes.append(SANDBOX_FAILURE_NOTE)
        return BashResult(
            tool_input.command,
            captured,
            run.exit_code,
            run.timed_out,
            timeout_s,
            run.duration_s,
            tuple(notes),
            final_argv,
        )

    # --- what the model reads --------------------------------------------------------------------------
    def to_result(self, data: BashResult, ctx: ToolContext) -> Rendered:
        if data.background_id is not None:
            task_id = data.background_id
            text = (
                f"Started in the background as {task_id}. Read its output with BashOutput "
                f'(id="{task_id}") and stop it with KillShell (id="{task_id}"). It stops when the session ends.'
            )
            return Rendered(_with_notes(text, data.notes))
        assert data.captured is not None
        output = _clean(data.captured.text)
        notes = list(data.notes)
        if data.captured.binary:
            notes.append("The output holds binary data: NUL and bytes that are not UTF-8 are shown as \\xNN.")
        if data.timed_out:
            head = (
                f"Timed out after {_seconds(data.timeout_s)}: the command and every process it started were "
                "stopped. If it needs longer, pass a larger timeout (at most "
                f"{MAX_TIMEOUT_MS} ms) or use run_in_background."
            )
            body = f"Output before it was stopped:\n{output}" if output else "It printed nothing before it was stopped."
            return Rendered(_with_notes(f"{head}\n{body}", notes), is_error=True)
        code = data.exit_code if data.exit_code is not None else -1
        if code == 0:
            return Rendered(_with_notes(output or "(The command succeeded and printed nothing.)", notes))
        meaning = _exit_meaning(data.final_argv, code)
        if meaning is not None:
            text = output or "(Nothing was printed.)"
            return Rendered(_with_notes(f"{text}\n(Exit code 1: {meaning}. This is not an error.)", notes))
        status = f"Exit code {code}"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
            status = f"Exit code {128 - code} (the shell was killed by {name})"
        body = output or "(The command printed nothing.)"
        return Rendered(_with_notes(f"{status}\n{body}", notes), is_error=True)


def _exit_meaning(argv: tuple[str, ...], code: int) -> str | None:
    if code != 1 or not argv:
        return None
    if argv[0] == "git" and len(argv) > 1 and argv[1] == "grep":
        return "no matches were found"
    if argv[0] == "git" and len(argv) > 1 and argv[1] == "diff" and ("--quiet" in argv or "--exit-code" in argv):
        return "there are differences"
    return _EXIT_ONE_MEANS.get(os.path.basename(argv[0]))


def read_only_refusal(output: str, *, plan: bool) -> str:
    """What the result says when a command run read-only tried to write: what it tried, where the output names
    it, and how to run it as a command that writes (nothing is retried for the model)."""
    refused: dict[str, None] = {}
    for line in output.splitlines():
        if _READ_ONLY_SIGN in line:
            for match in _REFUSED_PATH.finditer(line):
                path = match.group(1) or match.group(2)
                if path and path != _READ_ONLY_SIGN:
                    refused[path] = None
    names = list(refused)
    shown = ", ".join(names[:_MAX_REFUSED_SHOWN]) + (
        f" and {len(names) - _MAX_REFUSED_SHOWN} more" if len(names) > _MAX_REFUSED_SHOWN else ""
    )
    what = f"It tried to write ({shown})" if names else "It tried to write a file"
    if plan:
        return (
            f"{what}, and in plan mode every command runs where nothing is writable, so nothing was changed. "
            "Finish the plan; the user can leave plan mode to let commands change files."
        )
    return (
        f"{what}, but it was allowed as a read-only command, and a read-only command runs where nothing is "
        "writable, so nothing was changed. If it needs to write, call it again with writes: true; it is then "
        "judged as a command that changes files (the user may be asked)."
    )


def _blocked_by_sandbox(output: str) -> bool:
    return any(sign in output for sign in _SANDBOX_SIGNS)


def _clean(text: str) -> str:
    """Without leading blank lines and trailing whitespace (the content in between is left alone)."""
    lines = text.rstrip().split("\n")
    start = 0
    while start < len(lines) - 1 and not lines[start].strip():
        start += 1
    return "\n".join(lines[start:])


def _with_notes(text: str, notes: Sequence[str]) -> str:
    if not notes:
        return text
    return text + "\n\n" + "\n".join(f"({note})" for note in notes)


def _adopt(store: OutputStore, spills: list[tuple[str, Path]], source: str) -> None:
    for ref, path in spills:
        if path.exists():
            store.adopt(ref, path, source=source)


def render_interrupted(captured: Captured, elapsed_s: float, notes: Sequence[str]) -> str:
    output = _clean(captured.text)
    head = (
        f"Interrupted after {_seconds(elapsed_s)}: the command was cancelled, and it and every process it "
        "started were stopped. It may have partly taken effect; check before running it again."
    )
    body = f"Output before it was stopped:\n{output}" if output else "It printed nothing before it was stopped."
    return _with_notes(f"{head}\n{body}", notes)
