"""Problems: the errors and warnings the editor's language servers report, for one file or the workspace.

Offered only in sessions with an editor (the EDITOR_PROBLEMS dependency is there); it reads the live buffers' problems,
not the files on disk. A file is opened in the editor when it was not, so that its language server looks at it, and
the answer waits (bounded by the editor's setting) for the problems to settle.

The composer's `@problems` mention is answered by the same two functions (`find_problems`, `problems_text`), so the
person and the model see one list: one request to the editor, the same files left out, errors first, one cap.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from pydantic import Field

from toolgate.core.context import ToolContext
from toolgate.core.editor_problems import EDITOR_PROBLEMS, ProblemsReport, ProblemsUnavailable, Wanted
from toolgate.core.errors import StateError, ToolFailure
from toolgate.core.paths import display_input_path, display_path, is_within
from toolgate.core.tool import LOOKS_ONLY, DescribeContext, Tool, ToolInput
from toolgate.text.problems import problem_line, reported
from toolgate.tools._search import ReadDenyFilter

MAX_PROBLEMS = 100
# Files named in one note at most (files a server has not reported on: every open file of a cold language).
MAX_NAMED_FILES = 10


class ProblemsInput(ToolInput):
    path: str | None = Field(
        default=None,
        description="A file (its problems, after the language server has looked at it) or a directory (the problems "
        "the editor knows under it), absolute or relative to the workspace. Omit it for the whole workspace.",
    )


@dataclass(frozen=True, slots=True)
class ProblemsFound:
    scope: str  # what was asked about, as the model named it
    lines: list[str]  # every problem, one line each, errors first
    unsettled: list[str]  # files whose language server had not settled within the wait
    waited_seconds: float
    single_file: bool
    covered: bool  # False: no language server reports on the one file asked about
    withheld: list[str] = field(default_factory=list)  # why some files' problems are left out, one note each
    unheard: list[str] = field(default_factory=list)  # files no language server has reported on yet (maybe starting)


class ProblemsTool(Tool[ProblemsInput, ProblemsFound]):
    name = "Problems"
    traits = LOOKS_ONLY
    input_model = ProblemsInput

    def description(self, ctx: DescribeContext) -> str:
        return (
            "List the errors and warnings the editor's language servers (type checkers, linters) report, as "
            "`path:line:column severity (source code): message`.\n"
            "- With a file path: that file's problems, from its current content in the editor (a file not open yet "
            "is opened and checked first).\n"
            "- With a directory, or without a path: the problems the editor knows of under it (language servers "
            "usually report only on files that were opened or changed, so this is not a full build).\n"
            f"- At most {MAX_PROBLEMS} come back, errors first; when there are more, the result gives the total.\n"
            "- After each file change the result already ends with the problems that change introduced; use this to "
            "look again later or elsewhere."
        )

    def paths(self, tool_input: ProblemsInput, ctx: ToolContext) -> Sequence[Path]:
        return [_target(tool_input.path, ctx)]

    def summary(self, tool_input: ProblemsInput, workspace: Path) -> str:
        return display_input_path(tool_input.path, workspace) if tool_input.path else "the workspace"

    async def call(self, tool_input: ProblemsInput, ctx: ToolContext) -> ProblemsFound:
        return await find_problems(tool_input.path, ctx)

    def to_result(self, data: ProblemsFound, ctx: ToolContext) -> str:
        return problems_text(data)


def _target(path: str | None, ctx: ToolContext) -> Path:
    return ctx.resolve_path(path) if path else ctx.workspace


async def find_problems(path: str | None, ctx: ToolContext) -> ProblemsFound:
    """The errors and warnings the editor reports for `path` (a file or a directory; None: the workspace). Under a
    directory, the files a Read rule guards and credential files are left out (and counted), as Grep leaves them out:
    a problem's message may quote the line it is about. Raises ToolFailure (no editor, or no answer from it) and
    StateError (no such path)."""
    source = ctx.get(EDITOR_PROBLEMS)
    if source is None:
        raise ToolFailure("Problems needs the editor, and this session has none; run the project's checks instead.")
    target = _target(path, ctx)
    single = target.is_file()
    if path and not single and not target.is_dir():
        raise StateError(f"{path} does not exist. Give an existing file or directory, or no path.")
    try:
        report = await source.problems([Wanted(target)] if single else None, wait=single)
    except ProblemsUnavailable as exc:
        message = f"The editor could not list the problems ({exc}). Try again, or run the checks."
        raise ToolFailure(message) from None
    scope = display_path(target, ctx.workspace) if path else "the workspace"
    # A file named on its own was judged by the permission step (a credential file asks) or chosen by the person; the
    # files of a tree were not.
    guard = None if single else ReadDenyFilter.for_session(ctx, credentials=True)
    return await anyio.to_thread.run_sync(_found, report, target, scope, single, ctx.workspace, guard)


def problems_text(data: ProblemsFound) -> str:
    """The list as the model reads it: a head with the count (and the cap, when it cuts), then one line each."""
    if data.single_file and not data.covered:
        return f"No language server in the editor reports problems for {data.scope}, so there is nothing to list."
    notes = list(data.withheld)
    if data.unsettled:
        notes.append(
            f"The language server had not finished checking {', '.join(data.unsettled)} within "
            f"{data.waited_seconds:g} s; ask again in a moment for a complete list."
        )
    if data.unheard:
        them = "it" if len(data.unheard) == 1 else "them"
        notes.append(
            f"No language server has reported on {_named(data.unheard)} yet (it may still be starting), so no "
            f"problems listed for {them} does not mean none; ask again in a moment."
        )
    if not data.lines:
        listed = "listed " if data.unheard else ""  # a server that has not looked found nothing: that is not "none"
        return "\n".join([f"No errors or warnings {listed}in {data.scope}.", *notes])
    shown = data.lines[:MAX_PROBLEMS]
    head = f"{len(data.lines)} problem{'s' if len(data.lines) != 1 else ''} in {data.scope}"
    if len(data.lines) > MAX_PROBLEMS:
        head += f" (showing {MAX_PROBLEMS} of {len(data.lines)}; give a file or directory to narrow the list)"
    return "\n".join([head + ":", *shown, *notes])


def _found(
    report: ProblemsReport, target: Path, scope: str, single: bool, workspace: Path, guard: ReadDenyFilter | None
) -> ProblemsFound:
    lines: list[tuple[int, str]] = []
    unsettled: list[str] = []
    unheard: list[str] = []
    for file in report.files:
        if not single and not is_within(file.path, target):
            continue
        problems = reported(file.problems)
        unsettled_here = file.covered and not file.settled
        unheard_here = file.covered and not file.heard and not file.problems and not unsettled_here
        if not problems and not unsettled_here and not unheard_here:
            continue
        if guard is not None and not guard(os.fsencode(file.path)):
            continue  # not even named: its name may be what a rule protects
        label = display_path(file.path, workspace)
        if unsettled_here:
            unsettled.append(label)
        elif unheard_here:
            unheard.append(label)
        text = _text(file.path)
        lines.extend((0 if p.severity == "error" else 1, problem_line(label, text, p)) for p in problems)
    lines.sort(key=lambda item: item[0])  # stable: errors first, each file's own order kept
    own = report.of(target)
    return ProblemsFound(
        scope=scope,
        lines=[line for _, line in lines],
        unsettled=unsettled,
        waited_seconds=report.waited_seconds,
        single_file=single,
        covered=own.covered if single and own is not None else True,
        withheld=_withheld(guard),
        unheard=unheard,
    )


def _withheld(guard: ReadDenyFilter | None) -> list[str]:
    """What the guard left out, in words: nothing is left out silently."""
    if guard is None:
        return []
    notes = []
    if guard.hidden:
        them = "it" if guard.hidden == 1 else "them"
        notes.append(f"The problems of {_files(guard.hidden)} are left out: permission rules forbid reading {them}.")
    if guard.credentials:
        notes.append(
            f"The problems of {_files(guard.credentials)} holding credentials (.env files, keys) are left out; "
            "Problems with such a file's path asks the user first."
        )
    return notes


def _named(labels: list[str]) -> str:
    """The files, by name up to MAX_NAMED_FILES, then how many more."""
    named = ", ".join(labels[:MAX_NAMED_FILES])
    more = len(labels) - MAX_NAMED_FILES
    return f"{named} and {more:,} more" if more > 0 else named


def _files(count: int) -> str:
    return f"{count:,} file{'' if count == 1 else 's'}"


def _text(path: Path) -> str:
    """The file's text, for its columns (the editor's are UTF-16 units); empty when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
