"""The editor's language features as a session's `CodeIntel`: questions sent to the extension, answers bounded.

An approval may wait an hour for a person; a language server's answer may not: every question here ends within
`INTEL_ANSWER_SECONDS`, and an editor that is gone, fails or answers off-protocol is `IntelUnavailable`, which
the tools turn into a result that says so. Which languages are covered is asked once, in the background, when
the first session opens; until the answer comes the tools are described without a language list.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, TypeVar

from toolgate.core.code_intel import IntelAnswer, IntelQuery, IntelUnavailable
from toolgate.sidecar.approvals import ClientChannel, ClientUnavailable
from toolgate.sidecar.protocol_editor_intel import (
    EDITOR_INTEL,
    EDITOR_INTEL_LANGUAGES,
    IntelAnswerResult,
    IntelLanguagesParams,
    IntelLanguagesResult,
    IntelQueryParams,
)
from toolgate.sidecar.wire_model import WireModel

if TYPE_CHECKING:
    from toolgate.core.tool import AnyTool

logger = logging.getLogger("toolgate.sidecar.editor_intel")
ResultT = TypeVar("ResultT", bound=WireModel)

# Long enough for a language server that is still loading a project; short enough that a model is not left waiting.
INTEL_ANSWER_SECONDS = 20.0


class EditorIntel:
    """Implements `toolgate.core.code_intel.CodeIntel` by asking the editor. One instance serves every session."""

    def __init__(self, channel: ClientChannel, answer_seconds: float = INTEL_ANSWER_SECONDS) -> None:
        self._channel = channel
        self.answer_seconds = answer_seconds
        self._languages: frozenset[str] | None = None
        self._asking: asyncio.Task[None] | None = None

    @property
    def languages(self) -> frozenset[str] | None:
        return self._languages

    async def ask(self, query: IntelQuery) -> IntelAnswer:
        params = IntelQueryParams.model_validate(query.model_dump())
        return await self._request(EDITOR_INTEL, params, IntelAnswerResult, f"the {query.operation} question")

    def attach(self) -> asyncio.Task[None] | None:
        """Ask which languages are covered, once, without waiting for the answer (a session is opening); the
        question's task, for whoever wants to wait for it."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None  # no editor to ask outside the server's loop (a session built by a script or a test)
        if self._asking is None:
            self._asking = loop.create_task(self._ask_languages())
        return self._asking

    async def _ask_languages(self) -> None:
        try:
            answer = await self._request(
                EDITOR_INTEL_LANGUAGES, IntelLanguagesParams(), IntelLanguagesResult, "the languages question"
            )
        except IntelUnavailable as exc:
            logger.info("the editor did not say which languages it has language features for: %s", exc)
            return
        self._languages = frozenset(answer.languages)

    async def _request(self, method: str, params: WireModel, result: type[ResultT], what: str) -> ResultT:
        try:
            async with asyncio.timeout(self.answer_seconds):
                return await self._channel.request(method, params, result)
        except TimeoutError:
            raise IntelUnavailable(f"the editor did not answer {what} within {self.answer_seconds:g} s") from None
        except ClientUnavailable as exc:
            raise IntelUnavailable(str(exc)) from None

    def tools(self) -> list[AnyTool]:
        """The tools an editor-attached session has on top of the built-in ones."""
        from toolgate.tools.lsp import LspTool
        from toolgate.tools.rename import RenameTool

        return [LspTool(lambda: self.languages), RenameTool(lambda: self.languages)]
