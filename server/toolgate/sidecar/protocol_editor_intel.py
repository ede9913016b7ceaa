"""Wire models of the editor's language features (`EDITOR_INTEL_METHODS`, joined into `protocol.METHODS`).

Both are server→client: the sidecar asks, the extension answers from VS Code's language features
(`vscode.execute*Provider` commands, which read the open buffers). The extension only reports what the language
servers say; which question to ask and what to show the model is decided in the sidecar.
"""

from __future__ import annotations

from pydantic import Field

from toolgate.core.code_intel import IntelAnswer, IntelQuery
from toolgate.sidecar.wire_model import Method, WireModel

EDITOR_INTEL = "toolgate/editor/intel"
EDITOR_INTEL_LANGUAGES = "toolgate/editor/intelLanguages"


class IntelQueryParams(WireModel, IntelQuery):
    """One question for the editor's language features: an operation, a document and an LSP position (0-based
    line, UTF-16 character), or a workspace symbol query, or a rename's new name."""


class IntelAnswerResult(WireModel, IntelAnswer):
    """What the language features said. `provided` false: no provider answers this for this document."""


class IntelLanguagesParams(WireModel):
    """No parameters."""


class IntelLanguagesResult(WireModel):
    languages: list[str] = Field(
        description="Language ids (typescript, python, …) the editor has definition/reference providers for."
    )


EDITOR_INTEL_METHODS: tuple[Method, ...] = (
    Method(EDITOR_INTEL, "serverToClient", IntelQueryParams, IntelAnswerResult, "Ask the editor's language features."),
    Method(
        EDITOR_INTEL_LANGUAGES,
        "serverToClient",
        IntelLanguagesParams,
        IntelLanguagesResult,
        "Which languages the editor's language features cover (asked once, when the first session opens).",
    ),
)
