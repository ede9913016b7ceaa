"""The editor's problems for an editor-attached session: the source the Problems tool asks, and the step that ends
an edit's result with the problems it introduced.

The step follows every call of the edit family (Edit, Write, NotebookEdit, ApplyPatch) once it is allowed: right
before the call it asks for the problems of the files the call names (the editor opens a file it did not have open
and lets its language server look first), and after the call, and its PostToolUse hooks, it asks again, for the
content now on disk (the editor waits until its buffer holds that content, then until the problems stop changing,
bounded by its `toolgate.problems.waitSeconds` setting). `toolgate.text.problems` says which are new. An editor that
cannot answer costs the result nothing: no note, and the call's own result stands.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from toolgate.core.change_followers import CHANGE_FOLLOWER
from toolgate.core.deps import Dep
from toolgate.core.editor_problems import EDITOR_PROBLEMS as EDITOR_PROBLEMS_SOURCE
from toolgate.core.editor_problems import (
    FileReport,
    ProblemsReport,
    ProblemsSource,
    ProblemsUnavailable,
    Wanted,
    text_digest,
)
from toolgate.core.messages import ToolResult
from toolgate.core.paths import display_path
from toolgate.sidecar.approvals import ClientChannel, ClientUnavailable
from toolgate.sidecar.protocol_problems import (
    EDITOR_PROBLEMS,
    EditorProblemsParams,
    EditorProblemsResult,
    ProblemsFileRequest,
)
from toolgate.text.encoding import UndecodableError, decode
from toolgate.text.problems import (
    Baseline,
    FileProblems,
    Problem,
    baselines_after_moves,
    new_problems,
    render_new_problems,
    reported,
)

if TYPE_CHECKING:
    from toolgate.core.context import ToolContext
    from toolgate.core.tool import AnyTool, ToolInput

logger = logging.getLogger("toolgate.sidecar.problems")

# The tools whose results end with the problems they introduced (permissions.rules.EDIT_FAMILY, named here: the
# permission modules load with the first session, after this one; a test keeps the two the same).
FOLLOWED_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "ApplyPatch", "Rename"})
# The editor's setting is at most this long; past it (plus a margin for the wire) the sidecar stops waiting itself,
# so that an editor that never answers cannot hold a call up.
MAX_WAIT_SECONDS = 30.0
_WIRE_MARGIN_SECONDS = 5.0


class EditorProblemsSource:
    """Implements `core.editor_problems.ProblemsSource` by asking the editor (`toolgate/editor/problems`)."""

    def __init__(self, channel: ClientChannel, limit_seconds: float = MAX_WAIT_SECONDS + _WIRE_MARGIN_SECONDS) -> None:
        self._channel = channel
        self._limit = limit_seconds

    async def problems(self, files: Sequence[Wanted] | None, *, wait: bool, patient: bool = True) -> ProblemsReport:
        asked = None if files is None else [_request(w) for w in files]
        params = EditorProblemsParams(files=asked, wait=wait, patient=patient)
        with anyio.move_on_after(self._limit) as scope:
            try:
                answer = await self._channel.request(EDITOR_PROBLEMS, params, EditorProblemsResult)
            except ClientUnavailable as exc:
                raise ProblemsUnavailable(str(exc)) from None
        if scope.cancelled_caught:
            raise ProblemsUnavailable(f"the editor did not answer within {self._limit:g} s")
        return _report(answer)


def _request(wanted: Wanted) -> ProblemsFileRequest:
    digest = None if wanted.text is None else text_digest(wanted.text)
    return ProblemsFileRequest(path=str(wanted.path), content_sha256=digest)


def _report(answer: EditorProblemsResult) -> ProblemsReport:
    files = tuple(
        FileReport(
            path=Path(f.path),
            covered=f.covered,
            settled=f.settled,
            heard=f.heard_from_server,
            loaded=f.loaded,
            problems=tuple(Problem(p.line, p.character, p.severity, p.message, p.source, p.code) for p in f.problems),
        )
        for f in answer.files
    )
    return ProblemsReport(files=files, waited_seconds=answer.waited_seconds)


def _read_text(path: Path) -> str | None:
    """The file's text as the editor would hold it (LF line endings); None: no such file, or not text."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return decode(data).text
    except UndecodableError:
        return None


async def _read_texts(paths: Sequence[Path]) -> dict[Path, str | None]:
    return await anyio.to_thread.run_sync(lambda: {path: _read_text(path) for path in paths})


@dataclass(slots=True)
class _Before:
    """What the step saw before a call: each file's text, the problems the editor reported for it, and which files
    the call moves (new path -> old path)."""

    source: ProblemsSource
    workspace: Path
    texts: dict[Path, str | None]
    report: ProblemsReport
    moved_from: Mapping[Path, Path]

    async def after(self, result: ToolResult) -> str | None:
        if result.is_error:
            return None  # nothing was written (the edit tools write all or nothing)
        now = await _read_texts(list(self.texts))
        wanted = [Wanted(path, text) for path, text in now.items() if text is not None]
        if not wanted:
            return None
        try:
            report = await self.source.problems(wanted, wait=True)
        except ProblemsUnavailable as exc:
            logger.warning("no problems after the edit: %s", exc)
            return None
        return after_edit_note(self.workspace, self.texts, now, self.report, report, self.moved_from)


def after_edit_note(
    workspace: Path,
    old_texts: dict[Path, str | None],
    new_texts: dict[Path, str | None],
    before: ProblemsReport,
    after: ProblemsReport,
    moved_from: Mapping[Path, Path] | None = None,
) -> str | None:
    """What the result ends with: the new problems of each changed file its language server covers (a moved file's
    compared with its old path's), which files the editor had not loaded the change to (their problems are the old
    content's, so none is listed), which it did not finish checking in time, and which it had not reported on at all.
    None: nothing to say (no language server, or no new problem)."""
    earlier = {
        path: Baseline(text or "", seen.problems if (seen := before.of(path)) is not None else ())
        for path, text in old_texts.items()
    }
    baselines = baselines_after_moves(earlier, moved_from or {})
    found: list[FileProblems] = []
    unloaded: list[str] = []
    unsettled: list[str] = []
    unheard: list[str] = []
    for report in after.files:
        text = new_texts.get(report.path)
        if text is None or not report.covered:
            continue
        label = display_path(report.path, workspace)
        if not report.loaded:
            unloaded.append(label)
            continue
        baseline = baselines.get(report.path, Baseline("", ()))
        if fresh := reported(new_problems(baseline.problems, report.problems, baseline.text, text)):
            found.append(FileProblems(label, text, fresh))
        if not report.settled:
            unsettled.append(label)
        elif not report.heard:
            unheard.append(label)
    parts = [block] if (block := render_new_problems(found)) is not None else []
    if unloaded:
        parts.append(
            f"The editor had not yet loaded the change to {', '.join(unloaded)}, so problems may be missing here; "
            "the Problems tool shows them later."
        )
    if unsettled:
        parts.append(
            f"The language server had not finished checking {', '.join(unsettled)} within "
            f"{after.waited_seconds:g} s, so problems may be missing here; the Problems tool shows them later."
        )
    if unheard:
        parts.append(
            f"The language server had not reported on {', '.join(unheard)} yet (it may still be starting), so no "
            "problems here does not mean none; run the Problems tool on it in a moment."
        )
    return "\n".join(parts) if parts else None


class ProblemsFollower:
    """Implements `core.change_followers.ChangeFollower` for an editor-attached session."""

    def __init__(self, source: ProblemsSource) -> None:
        self._source = source

    async def before(self, tool: AnyTool, tool_input: ToolInput, ctx: ToolContext) -> _Before | None:
        if tool.name not in FOLLOWED_TOOLS:
            return None
        # A notebook's problems are the editor's per cell, not the file's: not asked about (nor shown as JSON).
        paths = [path for path in dict.fromkeys(tool.paths(tool_input, ctx)) if path.suffix != ".ipynb"]
        if not paths:
            return None
        texts = await _read_texts(paths)
        present = [Wanted(path) for path, text in texts.items() if text is not None]
        try:
            # The baseline: a short wait for a server still loading (it will have its whole wait after the edit).
            empty = ProblemsReport((), 0.0)
            report = await self._source.problems(present, wait=True, patient=False) if present else empty
        except ProblemsUnavailable as exc:
            logger.warning("%s not followed for problems: %s", tool.name, exc)
            return None
        return _Before(self._source, ctx.workspace, texts, report, tool.moved_from(tool_input, ctx))


def problems_dependencies(channel: ClientChannel) -> dict[Dep[Any], Any]:
    """What an editor-attached session gets: the editor's problems, and the step that follows each edit with them."""
    source = EditorProblemsSource(channel)
    return {EDITOR_PROBLEMS_SOURCE: source, CHANGE_FOLLOWER: ProblemsFollower(source)}
