"""The one skeleton of a tool that changes a single file: Edit, Write and NotebookEdit are its three shapes.

Every such call goes the same way (DESIGN §3): the call's one path → a plan (every state check, in order, then the
proposed text) → the diff review of that proposal (the runner asks `propose`) → at write time the plan again and
the text to write, the reviewed one if a person changed it (`final_text`) → the bytes in the file's own encoding →
the final check and the atomic write, with no await between (`_write` runs in one worker thread) → the record the
write leaves in readFileState → the result. A tool says only what is its own: which path, how it plans, how it
encodes, and what it reports.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

import anyio

from toolgate.core.context import ToolContext
from toolgate.core.errors import ToolError
from toolgate.core.file_state import FileRecord
from toolgate.core.paths import display_path
from toolgate.core.permission import FileProposal
from toolgate.core.tool import Tool, ToolInput
from toolgate.text.encoding import Decoded, UnencodableError
from toolgate.tools._write import FinalText, OnDisk, atomic_write, encoding_error, final_text, written_record


class WritePlan(Protocol):
    """What planning a change gives: the file as loaded, and the text proposed for it (LF form)."""

    @property
    def disk(self) -> OnDisk: ...

    @property
    def new_text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Encoded:
    """The bytes to write, and what the write leaves behind."""

    data: bytes
    text: str  # the file's new text, as readFileState records it
    known: Decoded | None = None  # what reading the bytes back gives, when that is certain (`written_record`)
    notes: tuple[str, ...] = ()  # what the model should know about how it was written


InputT = TypeVar("InputT", bound=ToolInput)
PlanT = TypeVar("PlanT", bound=WritePlan)
DoneT = TypeVar("DoneT")


class SingleFileWriter(Tool[InputT, DoneT], Generic[InputT, PlanT, DoneT]):
    @abstractmethod
    def file_path(self, tool_input: InputT) -> str:
        """The path as the model sent it."""

    @abstractmethod
    def plan(self, tool_input: InputT, path: Path, record: FileRecord | None, ctx: ToolContext) -> PlanT:
        """Every state check, in order, then the proposed text. Synchronous: it runs again right before the write."""

    @abstractmethod
    def encode(self, tool_input: InputT, plan: PlanT, chosen: FinalText, shown: str) -> Encoded:
        """The bytes of `chosen` in the file's own format (raise UnencodableError or StateError to refuse)."""

    @abstractmethod
    def done(self, tool_input: InputT, plan: PlanT, chosen: FinalText, encoded: Encoded, shown: str) -> DoneT:
        """What the call did, for `to_result`."""

    def paths(self, tool_input: InputT, ctx: ToolContext) -> Sequence[Path]:
        return [ctx.resolve_path(self.file_path(tool_input))]

    async def validate(self, tool_input: InputT, ctx: ToolContext) -> None:
        path = ctx.resolve_path(self.file_path(tool_input))
        await anyio.to_thread.run_sync(self.plan, tool_input, path, ctx.file_state.get(path), ctx)

    async def propose(self, tool_input: InputT, ctx: ToolContext) -> list[FileProposal] | None:
        path = ctx.resolve_path(self.file_path(tool_input))
        try:
            plan = await anyio.to_thread.run_sync(self.plan, tool_input, path, ctx.file_state.get(path), ctx)
        except ToolError:
            return None  # the call itself will report the problem
        original = plan.disk.text if plan.disk.exists else None
        return [FileProposal(path=str(path), original=original, proposed=plan.new_text)]

    async def call(self, tool_input: InputT, ctx: ToolContext) -> DoneT:
        path = ctx.resolve_path(self.file_path(tool_input))
        record = ctx.file_state.get(path)
        done, encoded, st = await anyio.to_thread.run_sync(self._write, tool_input, path, record, ctx)
        ctx.commit(lambda s: s.file_state.set(path, written_record(encoded.text, st, encoded.known)))
        return done

    def _write(
        self, tool_input: InputT, path: Path, record: FileRecord | None, ctx: ToolContext
    ) -> tuple[DoneT, Encoded, os.stat_result]:
        """The final check and the write, with no await between them."""
        shown = display_path(path, ctx.workspace)
        plan = self.plan(tool_input, path, record, ctx)
        chosen = final_text(ctx, path, plan.new_text, shown)
        try:
            encoded = self.encode(tool_input, plan, chosen, shown)
        except UnencodableError as exc:
            raise encoding_error(shown, exc) from None
        st = atomic_write(plan.disk.target, encoded.data, plan.disk.stat, shown, ctx.workspace)
        return self.done(tool_input, plan, chosen, encoded, shown), encoded, st
