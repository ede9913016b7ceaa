"""Wire models of the editor's problems: the sidecar asks the editor what its language servers report for some files
(or the whole workspace), after waiting for them to settle on the content the sidecar wrote (`PROBLEMS_METHODS`,
joined into `protocol.METHODS`). The editor answers what its language servers say; the sidecar decides what the model
is shown (toolgate.text.problems)."""

from __future__ import annotations

from pydantic import Field

from toolgate.sidecar.wire_model import Method, WireModel
from toolgate.text.problems import Severity

EDITOR_PROBLEMS = "toolgate/editor/problems"


class ProblemsFileRequest(WireModel):
    path: str = Field(description="Absolute path of the file.")
    content_sha256: str | None = Field(
        default=None,
        description="Wait until the editor's text of the file has this SHA-256 (hex, of its UTF-8 bytes) before "
        "waiting for the problems to settle. None: the file as the editor has it now.",
    )


class EditorProblemsParams(WireModel):
    files: list[ProblemsFileRequest] | None = Field(
        description="The files to report on; None: every file the editor has problems for (no waiting)."
    )
    wait: bool = Field(
        description="Wait (bounded by the editor's toolgate.problems.waitSeconds setting) for the language servers to "
        "settle; False: answer with what they reported so far, except for files the editor did not have open."
    )
    patient: bool = Field(
        default=False,
        description="A language server not heard from yet in this window (it may be loading its project) gets the "
        "whole wait to report; False: a short one (the baseline asked for before an edit).",
    )


class EditorProblem(WireModel):
    line: int = Field(ge=0, description="0-based line of the problem's start.")
    character: int = Field(ge=0, description="0-based UTF-16 offset of the problem's start in its line.")
    severity: Severity
    message: str
    source: str | None = None
    code: str | None = None


class FileProblemsAnswer(WireModel):
    path: str
    covered: bool = Field(
        description="Some language server reports problems for files like this one (it reported for this file or "
        "its language, or an extension for the language is active). False: nothing was waited for."
    )
    settled: bool = Field(
        description="The editor had the requested content and its problems stopped changing within the wait."
    )
    loaded: bool = Field(
        default=True,
        description="The editor's buffer held the requested content (contentSha256) at some point of the wait. "
        "False: it never took it (its file watcher had not reported the change), so the problems are the old "
        "content's. Absent: the editor does not tell (taken as loaded).",
    )
    heard_from_server: bool = Field(
        default=True,
        description="A language server has reported in this window on this file or another file of its language "
        "(the server is up). False: none has, not even during the wait, so an empty list may only mean it is still "
        "starting. Absent: the editor does not tell (taken as heard).",
    )
    problems: list[EditorProblem]


class EditorProblemsResult(WireModel):
    files: list[FileProblemsAnswer]
    waited_seconds: float = Field(ge=0, description="The bound the editor waited within (its setting).")


PROBLEMS_METHODS: tuple[Method, ...] = (
    Method(
        EDITOR_PROBLEMS,
        "serverToClient",
        EditorProblemsParams,
        EditorProblemsResult,
        "The problems the editor's language servers report for files (after they settle), or for the workspace.",
    ),
)
